#!/bin/bash
# Call 7 on one H200: mpirun by hand across two testbed hosts of the GPU machine, with Open MPI's
# daemon debugging, to see why the daemons on other hosts did not start in call 6.
B=${B:-.gpu-bundle/env.sh}
export SCALEBENCH_TESTBED_DIR=/run/scalebench-testbed
S=$SCALEBENCH_TESTBED_DIR/tb
which mpirun orted; ls -la $(dirname $(which mpirun)) | head -5
timeout 60 $B scalebench testbed up 2 --launcher nsenter --no-slurm > /dev/null
$B scalebench testbed exec node1 -- bash -c "$S/nsenter-rsh node2 'hostname; which orted; echo PATH=\$PATH; echo LD=\$LD_LIBRARY_PATH'"
$B scalebench testbed exec node1 -- bash -c "timeout 40 env OMPI_MCA_plm=rsh mpirun --allow-run-as-root --mca plm_rsh_agent $S/nsenter-rsh -np 2 --host node1,node2 --debug-daemons --mca plm_base_verbose 10 --mca oob_base_verbose 10 hostname 2>&1 | tail -60"
$B scalebench testbed down > /dev/null

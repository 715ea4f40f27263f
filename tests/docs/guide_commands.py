#!/usr/bin/env python3
"""The commands in the guides must not rot: every ```sh block of the given Markdown files is read,
and each command in it is checked against the programs as built.

- `scalebench COMMAND`: the command exists and every --option it is given is one that
  `scalebench COMMAND --help` lists; an experiment file it studies or submits exists and
  passes validation (`scalebench submit FILE` to a coordinator that is not there: 4 is a file that
  parsed, 2 one that did not; `study` files are split at their `---` lines first, `submit` and
  `sbatch` take one experiment per file).
- `scalebench-run`: every option is one its --help lists; the workload and its -p parameters are
  parsed by the program itself (run without GPUs: a usage error exits 2 before anything runs).
- `scalebench-coordinator`, `scalebench-agent`: every option is one their --help lists.
- `sbatch ... deploy/slurm/scalebench.sbatch STUDY [OUT]`: the script and the study file as above.
- any other program (curl, prometheus, cp ...): every repository path it names exists.
- blocks opened with ```sh run are also run in full, from the repository root, each line with
  bash, `build/bin/` replaced by --bin and `/tmp/` by a private temporary folder; a line must exit
  0, or one of the codes its trailing comment names (`# exit 0|1`). Only host-memory work belongs
  in such blocks: they run in CI, where there is no GPU.

usage: guide_commands.py --bin BUILD/bin --src SOURCE [--no-run] FILE.md...
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

PROGRAMS = ("scalebench", "scalebench-run", "scalebench-coordinator", "scalebench-agent")
REPO_DIRS = ("examples", "deploy", "docs", "scripts", "tests")
OPERATORS = {"|", "||", "&&", ";", "&"}
REDIRECTS = {">", ">>", "<", "2>", "&>"}


class Checker:
    def __init__(self, bin_dir, src):
        self.bin = bin_dir
        self.src = src
        self.errors = []
        self.checked = 0
        self.env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                        OMPI_MCA_rmaps_base_oversubscribe="1", CUDA_VISIBLE_DEVICES="")
        self.help = {p: self.run([os.path.join(bin_dir, p), "--help"]).stdout for p in PROGRAMS}
        self.cli = self.parse_cli_help(self.help["scalebench"], self.command_help)
        self.scratch = tempfile.mkdtemp(prefix="scalebench-guides.")

    def run(self, argv, timeout=60, cwd=None):
        try:
            return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=self.env,
                                  cwd=cwd or self.src)
        except subprocess.TimeoutExpired as e:
            return subprocess.CompletedProcess(argv, 124, e.stdout or "", e.stderr or "")

    def command_help(self, command):
        return self.run([os.path.join(self.bin, "scalebench"), command, "--help"]).stdout

    @staticmethod
    def option_names(text):
        """The --options of a help text: the first word of each line under its Options: heading."""
        names, inside = set(), False
        for line in text.splitlines():
            if re.match(r"^[A-Za-z].*:$", line):
                inside = line.startswith("Options")
                continue
            words = line.split()
            if inside and words and words[0].startswith("-"):
                names.update(re.findall(r"--([a-z][a-z-]*)", words[0]))
        return names

    @classmethod
    def parse_cli_help(cls, text, command_help):
        """{command: set of its --options}: the commands `scalebench --help` lists under
        Subcommands:, each with the options its own `scalebench COMMAND --help` lists, and the
        program's (--log-level, --version), which every command takes."""
        common = cls.option_names(text)
        section = text.split("Subcommands:", 1)[1] if "Subcommands:" in text else ""
        commands = {}
        for m in re.finditer(r"^  ([a-z]+)\b", section, re.M):
            commands[m.group(1)] = cls.option_names(command_help(m.group(1))) | common | {"help"}
        return commands

    def fail(self, where, msg):
        self.errors.append(f"{where}: {msg}")

    # ---- files -----------------------------------------------------------------------------------
    def repo_path(self, token):
        path = token.split("=", 1)[-1]
        first = path.split("/", 1)[0]
        return path if "/" in path and first in REPO_DIRS else None

    def check_paths(self, where, tokens):
        for t in tokens:
            p = self.repo_path(t)
            if not p:
                continue
            if "*" in p:
                import glob
                if not glob.glob(os.path.join(self.src, p)):
                    self.fail(where, f"{p}: no such file in the repository")
            elif not os.path.exists(os.path.join(self.src, p)):
                self.fail(where, f"{p}: no such file in the repository")

    def validate_experiments(self, where, path, several):
        """Each experiment of the file passes `scalebench submit`'s validation (exit 4: it parsed
        and the absent coordinator could not be reached; 2: the file is wrong)."""
        full = os.path.join(self.src, path)
        if not os.path.isfile(full):
            self.fail(where, f"{path}: no such experiment file")
            return
        with open(full, encoding="utf-8") as f:
            text = f.read()
        docs = [d for d in re.split(r"(?m)^---[ \t]*$", text) if d.strip()]
        if len(docs) > 1 and not several:
            # `scalebench submit` (and the SLURM script, which submits) reads one experiment per
            # file: it validates the first document only and does not run the others.
            self.fail(where, f"{path} holds {len(docs)} experiments; submit and sbatch take one per file "
                             f"(scalebench study runs several)")
            return
        for k, doc in enumerate(docs):
            tmp = os.path.join(self.scratch, f"experiment-{k}.yaml")
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(doc)
            r = self.run([os.path.join(self.bin, "scalebench"), "submit", tmp, "--coordinator", "http://127.0.0.1:9"],
                         timeout=30)
            self.checked += 1
            if r.returncode != 4:
                what = f"experiment {k + 1} of {path}" if len(docs) > 1 else path
                self.fail(where, f"{what} does not pass validation (scalebench submit exit {r.returncode}): "
                                 f"{(r.stderr or r.stdout).strip()}")

    # ---- programs --------------------------------------------------------------------------------
    def check_scalebench(self, where, args):
        if not args:
            self.fail(where, "scalebench without a command")
            return
        cmd, rest = args[0], args[1:]
        if cmd in ("-h", "--help"):
            return
        if cmd not in self.cli:
            self.fail(where, f"scalebench has no command '{cmd}' (scalebench --help lists: {', '.join(sorted(self.cli))})")
            return
        positional = []
        i = 0
        while i < len(rest):
            t = rest[i]
            if t.startswith("--"):
                key = t[2:].split("=", 1)[0]
                if key not in self.cli[cmd]:
                    self.fail(where, f"scalebench {cmd} has no option --{key} (its --help entry: "
                                     f"{', '.join('--' + o for o in sorted(self.cli[cmd] - {'help'})) or 'none'})")
                # Options that take a value swallow the next word.
                if "=" not in t and key not in ("outliers", "drain", "help", "version"):
                    i += 1
            else:
                positional.append(t)
            i += 1
        if cmd in ("study", "submit"):
            if len(positional) != 1:
                self.fail(where, f"scalebench {cmd} takes one experiment file, got {positional}")
            else:
                self.validate_experiments(where, positional[0], several=(cmd == "study"))
        self.checked += 1

    def check_options(self, where, program, args, value_options=()):
        known = set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", self.help[program]))
        i = 0
        while i < len(args):
            t = args[i]
            if t.startswith("-"):
                key = t.split("=", 1)[0]
                if key not in known:
                    self.fail(where, f"{program} has no option {key} (not in its --help)")
                elif "=" not in t and key in value_options:
                    i += 1
            i += 1
        self.checked += 1

    def check_run(self, where, args):
        self.check_options(where, "scalebench-run", args,
                           ("-p", "--repetitions", "--emit", "--format", "--spec", "--spec-env", "--mpirun", "--mpirun-arg",
                            "-b", "-e", "-f", "-g", "-n", "-w", "--log-level"))
        if "--spec" in args or "--spec-env" in args:
            return
        # The program parses its workload and parameters first; a mistake is a usage error (exit 2)
        # before MPI or any GPU starts. Run once, without mpirun, and without GPUs.
        r = self.run([os.path.join(self.bin, "scalebench-run"), *args], timeout=30)
        if r.returncode == 2 or "usage:" in r.stderr:
            self.fail(where, f"scalebench-run {' '.join(args)}: {r.stderr.strip().splitlines()[0] if r.stderr.strip() else 'exit 2'}")

    def check_sbatch(self, where, args):
        script = next((i for i, t in enumerate(args) if t.endswith("scalebench.sbatch")), None)
        if script is None:
            self.check_paths(where, args)
            return
        self.check_paths(where, [args[script]])
        after = args[script + 1:]
        if not 1 <= len(after) <= 2:
            self.fail(where, "scalebench.sbatch takes STUDY.yaml [OUT_DIR]")
        else:
            self.validate_experiments(where, after[0], several=False)

    def check_command(self, where, tokens):
        while tokens and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", tokens[0]):
            tokens = tokens[1:]
        if not tokens:
            return
        prog, args = tokens[0], tokens[1:]
        name = os.path.basename(prog)
        if name in ("mpirun", "srun", "mpiexec"):
            k = next((i for i, t in enumerate(args) if os.path.basename(t) in PROGRAMS), None)
            if k is None:
                self.check_paths(where, args)
                return
            prog, args, name = args[k], args[k + 1:], os.path.basename(args[k])
        if name in PROGRAMS and prog not in (name, "build/bin/" + name, "$SCALEBENCH_BIN/" + name):
            self.fail(where, f"{prog}: the programs are build/bin/{name} (or {name} on PATH)")
        if name == "scalebench":
            self.check_scalebench(where, args)
        elif name == "scalebench-run":
            self.check_run(where, args)
        elif name == "scalebench-coordinator":
            self.check_options(where, name, args, ("--listen", "--port", "--port-file", "--db", "--heartbeat-interval",
                                                   "--heartbeat-timeout", "--token-file", "--threads", "--record-threads",
                                                   "--tls-cert", "--tls-key"))
        elif name == "scalebench-agent":
            self.check_options(where, name, args, tuple(re.findall(r"^  (--[a-z-]+) [A-Z]", self.help[name], re.M)))
        elif name == "sbatch":
            self.check_sbatch(where, args)
        self.check_paths(where, [prog] + args)

    # ---- Markdown ------------------------------------------------------------------------------
    def blocks(self, path):
        """(first line number, run?, [(line number, text)]) of each ```sh block, continuation
        lines joined."""
        out = []
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        i = 0
        while i < len(lines):
            m = re.match(r"^```sh(?:\s+(run))?\s*$", lines[i])
            if not m:
                i += 1
                continue
            start, run, body = i + 1, bool(m.group(1)), []
            i += 1
            pending, pending_line = "", 0
            while i < len(lines) and not lines[i].startswith("```"):
                text = lines[i]
                if not pending:
                    pending_line = i + 1
                if text.rstrip().endswith("\\"):
                    pending += text.rstrip()[:-1] + " "
                else:
                    body.append((pending_line, pending + text))
                    pending = ""
                i += 1
            out.append((start, run, body))
            i += 1
        return out

    @staticmethod
    def split_commands(line):
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        tokens = list(lexer)
        commands, current, skip = [], [], False
        for t in tokens:
            if skip:
                skip = False
                continue
            if t in OPERATORS:
                commands.append(current)
                current = []
            elif t in REDIRECTS or t.endswith(">") or t == "<":
                skip = True
            else:
                current.append(t)
        commands.append(current)
        return [c for c in commands if c]

    def run_line(self, where, text):
        m = re.search(r"#\s*exit\s+([0-9|]+)\s*$", text)
        allowed = {int(c) for c in m.group(1).split("|")} if m else {0}
        # The guide's /tmp/ first: the build folder may itself lie under /tmp.
        command = text.replace("/tmp/", self.scratch + "/")
        command = re.sub(r"(?<![\w/.-])build/bin/", self.bin + "/", command)
        r = self.run(["bash", "-c", command], timeout=300)
        if r.returncode not in allowed:
            tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-15:])
            self.fail(where, f"exit {r.returncode} (want {'|'.join(map(str, sorted(allowed)))}):\n{tail}")

    def check_file(self, path, run):
        rel = os.path.relpath(path, self.src)
        for start, is_run, body in self.blocks(path):
            for number, text in body:
                if not text.strip() or text.lstrip().startswith("#"):
                    continue
                where = f"{rel}:{number}"
                try:
                    commands = self.split_commands(text)
                except ValueError as e:
                    self.fail(where, f"does not parse as a shell command: {e}")
                    continue
                for tokens in commands:
                    self.check_command(where, tokens)
                if is_run and run:
                    self.run_line(where, text)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True, help="folder of the built programs (build/bin)")
    parser.add_argument("--src", required=True, help="the repository root")
    parser.add_argument("--no-run", action="store_true", help="check only; run no `sh run` block")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    for p in PROGRAMS:
        if not os.access(os.path.join(args.bin, p), os.X_OK):
            print(f"guide_commands: {os.path.join(args.bin, p)} is not built", file=sys.stderr)
            return 1
    c = Checker(os.path.abspath(args.bin), os.path.abspath(args.src))
    for f in args.files:
        c.check_file(os.path.join(c.src, f) if not os.path.isabs(f) else f, not args.no_run)
    import shutil
    shutil.rmtree(c.scratch, ignore_errors=True)
    for e in c.errors:
        print(f"error: {e}", file=sys.stderr)
    print(f"guide_commands: {len(args.files)} files, {c.checked} checks, {len(c.errors)} errors")
    return 1 if c.errors else 0


if __name__ == "__main__":
    sys.exit(main())

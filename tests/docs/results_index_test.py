#!/usr/bin/env python3
"""scripts/results-index.py on small made-up results folders: it writes the index, marks what is
superseded, and refuses a folder without claims.txt (saying what to write), a figure its README
does not state, a folder with no raw output beside its README, two current claims of one topic
and machine that say neither supersedes nor alongside, and an index that is out of date."""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "results-index.py")


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def run(results, *args):
    return subprocess.run([sys.executable, SCRIPT, "--results", results, *args],
                          capture_output=True, text=True)


class ResultsIndex(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.results = self.tmp.name
        write(os.path.join(self.results, "2026-01-01-old", "README.md"), "all_reduce: 300.5 GB/s, nccl-tests 301.0 (0.998)\n")
        write(os.path.join(self.results, "2026-01-01-old", "claims.txt"),
              "kind: claim\ntopic: collective: busbw\nfigure: 300.5 GB/s\npeer: 301.0\nratio: 0.998\n"
              "gpu: 2 x H200\ncommit: abc1234 (added)\n")
        write(os.path.join(self.results, "2026-01-02-new", "README.md"), "all_reduce: 310.25 GB/s\n")
        write(os.path.join(self.results, "2026-01-02-new", "claims.txt"),
              "# a comment\nkind: claim\ntopic: collective: busbw\nfigure: 310.25 GB/s\n"
              "gpu: 2 x H200\ncommit: def5678\nsupersedes: 2026-01-01-old\n")
        write(os.path.join(self.results, "2026-01-03-probe", "README.md"), "looked for a cause\n")
        write(os.path.join(self.results, "2026-01-03-probe", "claims.txt"),
              "kind: investigation\nabout: looked for a cause\ngpu: 1 x H100\ncommit: 0123456\n")
        for folder in ("2026-01-01-old", "2026-01-02-new", "2026-01-03-probe"):
            write(os.path.join(self.results, folder, "run.log"), "the runs' output\n")

    def tearDown(self):
        self.tmp.cleanup()

    def index(self):
        with open(os.path.join(self.results, "README.md"), encoding="utf-8") as f:
            return f.read()

    def test_writes_current_superseded_and_investigations(self):
        r = run(self.results)
        self.assertEqual(r.returncode, 0, r.stderr)
        text = self.index()
        self.assertIn("| **current** | 310.25 GB/s |", text)
        self.assertIn("| superseded by [2026-01-02-new](2026-01-02-new/) | 300.5 GB/s | 301.0 | 0.998 |", text)
        self.assertIn("| 2026-01-03 | 1 x H100 | looked for a cause | 0123456 | [2026-01-03-probe](2026-01-03-probe/) |", text)
        self.assertEqual(run(self.results, "--check").returncode, 0)

    def test_check_fails_when_the_index_is_out_of_date(self):
        self.assertEqual(run(self.results).returncode, 0)
        write(os.path.join(self.results, "README.md"), self.index() + "hand edit\n")
        r = run(self.results, "--check")
        self.assertEqual(r.returncode, 1)
        self.assertIn("run: python3 scripts/results-index.py", r.stderr)

    def test_a_folder_without_claims_fails_and_says_what_to_write(self):
        write(os.path.join(self.results, "2026-01-04-later", "README.md"), "new figures\n")
        r = run(self.results, "--check")
        self.assertEqual(r.returncode, 1)
        self.assertIn("2026-01-04-later/claims.txt: missing", r.stderr)
        for line in ("kind: claim", "topic:", "figure:", "gpu:", "commit:", "kind: investigation"):
            self.assertIn(line, r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.results, "README.md")))

    def test_a_figure_the_readme_does_not_state_fails(self):
        write(os.path.join(self.results, "2026-01-02-new", "claims.txt"),
              "kind: claim\ntopic: collective: busbw\nfigure: 310.3 GB/s\ngpu: 2 x H200\ncommit: def5678\n")
        r = run(self.results)
        self.assertEqual(r.returncode, 1)
        self.assertIn("figure has 310.3, which the folder's README.md does not state", r.stderr)

    def test_bad_blocks_fail_with_file_and_line(self):
        write(os.path.join(self.results, "2026-01-02-new", "claims.txt"),
              "kind: claim\ntopic: collective: busbw\nfigure: 310.25 GB/s\ngpu: 2 x H200\n"
              "supersedes: 2026-01-09-nowhere\ncolour: blue\n")
        r = run(self.results)
        self.assertEqual(r.returncode, 1)
        self.assertIn("needs 'commit:'", r.stderr)
        self.assertIn("unknown key 'colour'", r.stderr)
        self.assertIn("supersedes '2026-01-09-nowhere', which is not a folder", r.stderr)
        self.assertIn("2026-01-02-new/claims.txt:1:", r.stderr)

    def test_two_current_claims_of_one_topic_and_machine_fail(self):
        # The newer folder says neither supersedes nor alongside: two current rows for one claim.
        write(os.path.join(self.results, "2026-01-02-new", "claims.txt"),
              "kind: claim\ntopic: collective: busbw\nfigure: 310.25 GB/s\ngpu: 2 x H200\ncommit: def5678\n")
        r = run(self.results)
        self.assertEqual(r.returncode, 1)
        self.assertIn("2026-01-02-new/claims.txt:1: a second current claim of topic 'collective: busbw' on "
                      "'2 x H200' beside 2026-01-01-old's", r.stderr)
        self.assertIn("'supersedes: 2026-01-01-old'", r.stderr)
        self.assertIn("'alongside: 2026-01-01-old'", r.stderr)

    def test_alongside_keeps_both_current_and_must_name_a_current_claim(self):
        write(os.path.join(self.results, "2026-01-02-new", "claims.txt"),
              "kind: claim\ntopic: collective: busbw\nfigure: 310.25 GB/s\ngpu: 2 x H200\ncommit: def5678\n"
              "alongside: 2026-01-01-old\n")
        r = run(self.results)
        self.assertEqual(r.returncode, 0, r.stderr)
        current = self.index().split("## Current claims")[1].split("## Every claim")[0]
        self.assertIn("| 300.5 GB/s |", current)
        self.assertIn("| 310.25 GB/s |", current)
        write(os.path.join(self.results, "2026-01-02-new", "claims.txt"),
              "kind: claim\ntopic: collective: busbw\nfigure: 310.25 GB/s\ngpu: 2 x H200\ncommit: def5678\n"
              "supersedes: 2026-01-01-old\nalongside: 2026-01-03-probe\n")
        r = run(self.results)
        self.assertEqual(r.returncode, 1)
        self.assertIn("alongside '2026-01-03-probe', which has no current claim of topic 'collective: busbw'",
                      r.stderr)

    def test_a_folder_without_raw_output_fails(self):
        os.remove(os.path.join(self.results, "2026-01-03-probe", "run.log"))
        r = run(self.results)
        self.assertEqual(r.returncode, 1)
        self.assertIn("2026-01-03-probe: holds only README.md and claims.txt: keep the raw output", r.stderr)

    def test_one_topic_on_other_machines_stays_current_in_both(self):
        write(os.path.join(self.results, "2026-01-02-new", "claims.txt"),
              "kind: claim\ntopic: collective: busbw\nfigure: 310.25 GB/s\ngpu: 4 x H200\ncommit: def5678\n")
        self.assertEqual(run(self.results).returncode, 0)


if __name__ == "__main__":
    unittest.main()

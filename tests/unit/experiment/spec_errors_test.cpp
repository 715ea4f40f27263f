#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "common/error.hpp"
#include "experiment/spec.hpp"
#include "tests/unit/experiment/spec_test_util.hpp"

namespace scalebench {
namespace {
using namespace spec_test;

// ---- bad input ----------------------------------------------------------------------------------

TEST(SpecErrors, MalformedYamlNamesFileLineAndColumn) {
  const std::string yaml = std::string(kHeader) +  // lines 1-2
                           "params:\n"             // 3
                           "  op: all_reduce\n"    // 4
                           " dtype: float32\n";    // 5: bad indentation
  SpecError e = spec_error(yaml);
  ASSERT_EQ(e.issues().size(), 1u);
  expect_at(e.issues()[0], 5, 2, "malformed YAML");
  EXPECT_EQ(std::string(e.what()).rfind("exp.yaml:5:2: malformed YAML", 0), 0u) << e.what();
}

TEST(SpecErrors, UnclosedFlowListIsMalformed) {
  SpecError e = spec_error(std::string(kHeader) + "matrix:\n  op: [all_reduce, all_gather\n");
  ASSERT_EQ(e.issues().size(), 1u);
  EXPECT_EQ(e.issues()[0].file, "exp.yaml");
  EXPECT_GE(e.issues()[0].line, 4);
  EXPECT_NE(e.issues()[0].message.find("malformed YAML"), std::string::npos);
}

TEST(SpecErrors, DocumentMustBeAMapping) {
  SpecError e = spec_error("- name\n- workload\n");
  ASSERT_EQ(e.issues().size(), 1u);
  EXPECT_EQ(e.issues()[0].line, 1);
  EXPECT_NE(e.issues()[0].message.find("mapping"), std::string::npos);
}

TEST(SpecErrors, UnknownTopLevelKey) {
  SpecError e = spec_error(std::string(kHeader) + "repetition: 5\n");  // line 3
  ASSERT_EQ(e.issues().size(), 1u);
  SourceIssue i = issue_for(e, "repetition");
  expect_at(i, 3, 1, "unknown key");
  EXPECT_NE(i.message.find("repetitions"), std::string::npos) << "the message lists the allowed keys";
  EXPECT_EQ(std::string(e.what()), "exp.yaml:3:1: field 'repetition': " + i.message);
}

TEST(SpecErrors, MissingNameAndWorkload) {
  SpecError e = spec_error("description: nothing else\n");
  ASSERT_EQ(e.issues().size(), 2u);
  expect_at(issue_for(e, "name"), 1, 1, "missing");
  expect_at(issue_for(e, "workload"), 1, 1, "missing");
}

TEST(SpecErrors, NameMustBeUsableAsALabel) {
  SpecError e = spec_error("name: has space\nworkload: collective\n");
  expect_at(issue_for(e, "name"), 1, 7, "letters, digits");
  SpecError e2 = spec_error("name: -leading-dash\nworkload: collective\n");
  issue_for(e2, "name");
}

TEST(SpecErrors, UnknownWorkload) {
  SpecError e = spec_error("name: demo\nworkload: colective\n");
  ASSERT_EQ(e.issues().size(), 1u);
  SourceIssue i = issue_for(e, "workload");
  expect_at(i, 2, 11, "unknown workload 'colective'");
  EXPECT_NE(i.message.find("collective"), std::string::npos) << "the message lists the known workloads";
}

TEST(SpecErrors, UnknownParameter) {
  const std::string yaml = std::string(kHeader) +  // 1-2
                           "params:\n"             // 3
                           "  op: all_reduce\n"    // 4
                           "  opp: all_gather\n";  // 5
  SpecError e = spec_error(yaml);
  ASSERT_EQ(e.issues().size(), 1u);
  SourceIssue i = issue_for(e, "params.opp");
  expect_at(i, 5, 3, "unknown parameter of workload 'collective'");
  EXPECT_NE(i.message.find("min_bytes"), std::string::npos) << "the message lists the parameters";
}

TEST(SpecErrors, UnknownParameterInMatrixAndVariant) {
  const std::string yaml = std::string(kHeader) +          // 1-2
                           "matrix:\n"                     // 3
                           "  sizes: [1, 2]\n"             // 4
                           "variants:\n"                   // 5
                           "  a:\n"                        // 6
                           "    params: {colour: red}\n";  // 7
  SpecError e = spec_error(yaml);
  expect_at(issue_for(e, "matrix.sizes"), 4, 3, "unknown parameter");
  expect_at(issue_for(e, "variants.a.params.colour"), 7, 14, "unknown parameter");
}

TEST(SpecErrors, NegativeSize) {
  const std::string yaml = std::string(kHeader) +    // 1-2
                           "params:\n"               // 3
                           "  min_bytes: \"-1\"\n";  // 4
  SpecError e = spec_error(yaml);
  ASSERT_EQ(e.issues().size(), 1u);
  expect_at(issue_for(e, "params.min_bytes"), 4, 14, "non-negative size");
}

TEST(SpecErrors, NegativeSizeInASweepListNamesTheElement) {
  const std::string yaml = std::string(kHeader) +              // 1-2
                           "matrix:\n"                         // 3
                           "  max_bytes: [1KiB, -1, 4KiB]\n";  // 4
  SpecError e = spec_error(yaml);
  ASSERT_EQ(e.issues().size(), 1u);
  expect_at(issue_for(e, "matrix.max_bytes[1]"), 4, 21, "non-negative size");
}

TEST(SpecErrors, ZeroSizeIsBelowTheMinimum) {
  SpecError e = spec_error(std::string(kHeader) + "params:\n  max_bytes: 0\n");
  expect_at(issue_for(e, "params.max_bytes"), 4, 14, "at least 1");
}

TEST(SpecErrors, MinBytesLargerThanMaxBytes) {
  const std::string yaml = std::string(kHeader) +  // 1-2
                           "params:\n"             // 3
                           "  min_bytes: 2KiB\n"   // 4
                           "  max_bytes: 1KiB\n";  // 5
  SpecError e = spec_error(yaml);
  ASSERT_EQ(e.issues().size(), 1u);
  expect_at(issue_for(e, "params"), 4, 3, "min_bytes (2048) is larger than max_bytes (1024)");
}

TEST(SpecErrors, MinBytesLargerThanTheDefaultMaxBytes) {
  SpecError e = spec_error(std::string(kHeader) + "params:\n  min_bytes: 128MiB\n");
  EXPECT_NE(issue_for(e, "params").message.find("larger than max_bytes (67108864)"), std::string::npos);
}

TEST(SpecErrors, AvgNeedsAFloatingPointDtype) {
  SpecError e = spec_error(std::string(kHeader) + "params:\n  reduce_op: avg\n  dtype: int32\n");
  EXPECT_NE(issue_for(e, "params").message.find("avg"), std::string::npos);
  EXPECT_NO_THROW(parse_experiment(std::string(kHeader) + "params: {reduce_op: avg, dtype: bfloat16}\n", "ok.yaml"));
}

TEST(SpecErrors, ZipListsOfDifferentLengths) {
  const std::string yaml = std::string(kHeader) +                 // 1-2
                           "zip:\n"                               // 3
                           "  min_bytes: [1KiB, 2KiB]\n"          // 4
                           "  max_bytes: [4KiB, 8KiB, 16KiB]\n";  // 5
  SpecError e = spec_error(yaml);
  ASSERT_EQ(e.issues().size(), 1u);
  SourceIssue i = issue_for(e, "zip.max_bytes");
  expect_at(i, 5, 14, "same length");
  EXPECT_NE(i.message.find("2 for 'min_bytes', 3 here"), std::string::npos) << i.message;
}

TEST(SpecErrors, ZipParameterAlsoInMatrix) {
  const std::string yaml = std::string(kHeader) +   // 1-2
                           "matrix:\n"              // 3
                           "  op: [all_reduce]\n"   // 4
                           "zip:\n"                 // 5
                           "  op: [all_gather]\n";  // 6
  SpecError e = spec_error(yaml);
  expect_at(issue_for(e, "zip.op"), 6, 7, "also swept in 'matrix'");
}

TEST(SpecErrors, SweepAxisMustBeANonEmptyList) {
  SpecError e = spec_error(std::string(kHeader) + "matrix:\n  op: all_reduce\n  dtype: []\n");
  expect_at(issue_for(e, "matrix.op"), 4, 7, "list of values");
  expect_at(issue_for(e, "matrix.dtype"), 5, 10, "empty list");
}

TEST(SpecErrors, BadEnumValueListsTheChoices) {
  SpecError e = spec_error(std::string(kHeader) + "params:\n  op: allreduce\n");
  SourceIssue i = issue_for(e, "params.op");
  expect_at(i, 4, 7, "unknown value 'allreduce'");
  EXPECT_NE(i.message.find("all_reduce"), std::string::npos);
}

TEST(SpecErrors, BadVariantEnvName) {
  const std::string yaml = std::string(kHeader) +             // 1-2
                           "variants:\n"                      // 3
                           "  pcie:\n"                        // 4
                           "    env:\n"                       // 5
                           "      NCCL_P2P_DISABLE: \"1\"\n"  // 6
                           "      1BAD-NAME: x\n";            // 7
  SpecError e = spec_error(yaml);
  ASSERT_EQ(e.issues().size(), 1u);
  expect_at(issue_for(e, "variants.pcie.env.1BAD-NAME"), 7, 7, "not a valid environment variable name");
}

TEST(SpecErrors, BadVariantBody) {
  const std::string yaml = std::string(kHeader) +   // 1-2
                           "variants:\n"            // 3
                           "  a:\n"                 // 4
                           "    when: sometimes\n"  // 5
                           "  b:\n"                 // 6
                           "    envs: {X: 1}\n";    // 7
  SpecError e = spec_error(yaml);
  expect_at(issue_for(e, "variants.a.when"), 5, 11, "unknown value 'sometimes'");
  expect_at(issue_for(e, "variants.b.envs"), 7, 5, "unknown key");
}

TEST(SpecErrors, BadTimeout) {
  SpecError e = spec_error(std::string(kHeader) + "timeout: soon\n");  // line 3
  ASSERT_EQ(e.issues().size(), 1u);
  expect_at(issue_for(e, "timeout"), 3, 10, "positive duration");
  for (const char* bad : {"0", "-5s", "5 days", "[1, 2]"}) {
    SpecError e2 = spec_error(std::string(kHeader) + "timeout: " + bad + "\n");
    issue_for(e2, "timeout");
  }
}

TEST(SpecErrors, BadRepetitions) {
  SpecError e = spec_error(std::string(kHeader) + "repetitions: 0\n");
  expect_at(issue_for(e, "repetitions"), 3, 14, "at least 1");
  issue_for(spec_error(std::string(kHeader) + "repetitions: many\n"), "repetitions");
}

TEST(SpecErrors, BadPlacement) {
  const std::string yaml = std::string(kHeader) +             // 1-2
                           "placement:\n"                     // 3
                           "  nodes: 2000\n"                  // 4
                           "  gpus_per_node: [1, 0, most]\n"  // 5
                           "  oversize: shrink\n"             // 6
                           "  racks: 1\n";                    // 7
  SpecError e = spec_error(yaml);
  expect_at(issue_for(e, "placement.nodes"), 4, 10, "over the limit of 1024");
  expect_at(issue_for(e, "placement.gpus_per_node[1]"), 5, 22, "at least 1");
  expect_at(issue_for(e, "placement.gpus_per_node[2]"), 5, 25, "expected an integer");
  expect_at(issue_for(e, "placement.oversize"), 6, 13, "unknown value 'shrink'");
  expect_at(issue_for(e, "placement.racks"), 7, 3, "unknown key");
}

TEST(SpecErrors, BadReferences) {
  const std::string yaml = std::string(kHeader) +         // 1-2
                           "references:\n"                // 3
                           "  busbw:\n"                   // 4
                           "    lower: 0.05\n"            // 5
                           "    upper: -0.05\n"           // 6
                           "    better: faster\n"         // 7
                           "    where: {colour: red}\n";  // 8
  SpecError e = spec_error(yaml);
  expect_at(issue_for(e, "references.busbw.target"), 5, 5, "missing");
  expect_at(issue_for(e, "references.busbw.lower"), 5, 12, "at or under 0");
  expect_at(issue_for(e, "references.busbw.upper"), 6, 12, "at or over 0");
  expect_at(issue_for(e, "references.busbw.better"), 7, 13, "unknown value 'faster'");
  expect_at(issue_for(e, "references.busbw.where.colour"), 8, 13, "unknown");
}

TEST(SpecErrors, EveryProblemIsReportedAtOnceOneALine) {
  const std::string yaml = std::string(kHeader) +  // 1-2
                           "params:\n"             // 3
                           "  opp: x\n"            // 4
                           "timeout: soon\n"       // 5
                           "extra: 1\n";           // 6
  SpecError e = spec_error(yaml);
  ASSERT_EQ(e.issues().size(), 3u) << e.what();
  const std::string what = e.what();
  EXPECT_NE(what.find("exp.yaml:4:3: field 'params.opp'"), std::string::npos) << what;
  EXPECT_NE(what.find("exp.yaml:5:10: field 'timeout'"), std::string::npos) << what;
  EXPECT_NE(what.find("exp.yaml:6:1: field 'extra'"), std::string::npos) << what;
  EXPECT_EQ(std::count(what.begin(), what.end(), '\n'), 2);
}

TEST(SpecErrors, DuplicateKeyIsAnError) {
  const std::string yaml = std::string(kHeader) +  // 1-2
                           "timeout: 10s\n"        // 3
                           "params:\n"             // 4
                           "  op: reduce\n"        // 5
                           "  op: broadcast\n"     // 6
                           "timeout: 5m\n";        // 7
  SpecError e = spec_error(yaml);
  ASSERT_EQ(e.issues().size(), 2u) << e.what();
  expect_at(issue_for(e, "timeout"), 7, 1, "duplicate key");
  expect_at(issue_for(e, "params.op"), 6, 3, "duplicate key");
}

TEST(SpecErrors, SpecErrorIsAScalebenchError) {
  try {
    parse_experiment("name: x\n", "exp.yaml");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("exp.yaml:1:1"), std::string::npos);
  }
}

// A typo in rounds or a huge sweep is refused at validation, before anything expands it.
TEST(SpecErrors, TooManyRunsAreRefused) {
  SpecError e = spec_error("name: big\nworkload: collective\nrounds: 200000\n");
  ASSERT_EQ(e.issues().size(), 1u);
  EXPECT_NE(e.issues()[0].message.find("expands into up to 200000 runs"), std::string::npos) << e.what();
  EXPECT_NE(e.issues()[0].message.find("at most 100000"), std::string::npos);
  const Experiment ok = parse_experiment("name: ok\nworkload: collective\nrounds: 1000\n", "ok.yaml");
  EXPECT_EQ(ok.rounds, 1000);
}

TEST(SpecErrors, TextThatIsNotUtf8NamesTheLineColumnAndByte) {
  SpecError e = spec_error("name: demo\nworkload: collective\ndescription: caf\xFD\n");
  ASSERT_EQ(e.issues().size(), 1u);
  expect_at(e.issues()[0], 3, 17, "not UTF-8 text (byte 0xFD)");
  // Well-formed multi-byte text is fine; an overlong form or a cut sequence is not.
  EXPECT_EQ(
      parse_experiment("name: demo\nworkload: collective\ndescription: \xC2\xB5s and \xE2\x80\x94\n", "ok.yaml").name,
      "demo");
  EXPECT_EQ(spec_error("name: demo\nworkload: collective\ndescription: \xC0\xAF\n").issues()[0].line, 3);
  EXPECT_EQ(spec_error("name: demo\nworkload: collective\ndescription: \xE2\x80").issues()[0].line, 3);
}

}  // namespace
}  // namespace scalebench

// Inputs the fuzzer once crashed the parser with (fuzz/seeds/experiment_spec/): each must parse or
// fail with scalebench's Error naming the problem, never with another exception.
TEST(SpecFuzzSeeds, OnceCrashingInputsFailCleanly) {
  const std::filesystem::path dir =
      std::filesystem::path(SCALEBENCH_TEST_DATA) / ".." / ".." / "fuzz" / "seeds" / "experiment_spec";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ++files;
    try {
      scalebench::parse_experiment(text, entry.path().filename().string());
    } catch (const scalebench::Error&) {
      // a clear error is what bad input should get
    } catch (const std::exception& e) {
      ADD_FAILURE() << entry.path() << ": " << e.what();
    }
  }
  EXPECT_GE(files, 2);
}

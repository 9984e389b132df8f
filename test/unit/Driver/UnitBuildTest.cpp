//===- UnitBuildTest.cpp - runUnitCompiles' schedule and failures ---------===//
//
// The steps are shell commands that check, when they run, what must (or must
// not) have run before them: a step runs after the steps it names, beside the
// others, and a failed optional step does not hold back its users.
//
//===----------------------------------------------------------------------===//
#include "thunder/Driver/UnitBuild.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

using namespace thunder;

namespace {

class UnitBuildTest : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> path;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("thunder-unit-build", path));
    dir = path.str().str();
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  /// A step that runs `script` (sh -c) and writes its object `name` when it
  /// succeeds; `after`: the names of the steps it needs first.
  UnitCompile step(const std::string &name, const std::string &script,
                   std::vector<std::string> after = {}) {
    UnitCompile s;
    s.object = path(name);
    s.argv = {"sh", "-c", "cd '" + dir + "' && " + script + " && touch " + name};
    for (const std::string &a : after)
      s.after.push_back(path(a));
    return s;
  }
  std::string path(const std::string &name) const { return dir + "/" + name; }
  bool exists(const std::string &name) const { return llvm::sys::fs::exists(path(name)); }

  std::string dir;
};

TEST_F(UnitBuildTest, AStepRunsAfterWhatItNeedsAndTheOthersBesideIt) {
  // Two workers: the header takes one; the unit that needs it waits, and the
  // independent unit listed after it runs meanwhile (before the header is done).
  std::vector<UnitCompile> steps = {
      step("header", "sleep 0.5"),
      step("user", "test -f header && test -f free", {"header"}),
      step("free", "test ! -f header"),
  };
  UnitBuildResult result = runUnitCompiles(steps, dir, "", 2);
  EXPECT_TRUE(result.ok) << result.error;
  EXPECT_EQ(result.compiled, 3u);
  EXPECT_TRUE(exists("user"));
}

TEST_F(UnitBuildTest, OneWorkerSkipsAStepThatMustWait) {
  // With one worker the step that waits is taken after the one it waits for,
  // though it is listed first.
  std::vector<UnitCompile> steps = {
      step("user", "test -f header", {"header"}),
      step("header", "true"),
  };
  UnitBuildResult result = runUnitCompiles(steps, dir, "", 1);
  EXPECT_TRUE(result.ok) << result.error;
  EXPECT_TRUE(exists("user"));
}

TEST_F(UnitBuildTest, AFailedOptionalStepDoesNotHoldBackItsUsers) {
  UnitCompile header = step("header", "false");
  header.optional = true;
  std::vector<UnitCompile> steps = {header, step("user", "test ! -f header", {"header"})};
  UnitBuildResult result = runUnitCompiles(steps, dir, "", 2);
  EXPECT_TRUE(result.ok) << result.error;
  EXPECT_TRUE(exists("user"));
  EXPECT_EQ(result.compiled, 1u);
}

TEST_F(UnitBuildTest, AFailureStopsTheBuildAndSaysWhichCommand) {
  std::vector<UnitCompile> steps = {
      step("broken", "echo 'unit.cpp:3: error: no' >&2; false"),
      step("user", "true", {"broken"}),
  };
  UnitBuildResult result = runUnitCompiles(steps, dir, "", 2);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.error.find("unit.cpp:3: error: no"), std::string::npos) << result.error;
  EXPECT_NE(result.error.find("sh -c"), std::string::npos) << result.error;
  EXPECT_FALSE(exists("user"));
}

TEST_F(UnitBuildTest, PrebuiltObjectsAreReadAfterTheCacheAndNeverWritten) {
  // A keyed step; each run counts itself in `runs` (outside the objects).
  auto keyed = [&](const std::string &name, const std::string &key) {
    UnitCompile s = step(name, "echo x >> runs");
    s.key = key;
    return s;
  };
  std::string prebuilt = dir + "/prebuilt", cache = dir + "/cache";
  // Fill the prebuilt directory as the build does: as a writable cache.
  UnitBuildResult seed = runUnitCompiles({keyed("driver", "driver v1")}, dir, prebuilt, 1);
  ASSERT_TRUE(seed.ok) << seed.error;
  EXPECT_EQ(seed.compiled, 1u);
  llvm::sys::fs::remove(path("driver"));

  // A build with a cache of its own takes the driver from the prebuilt
  // objects and compiles the kernel, which goes to its cache only.
  UnitBuildResult build = runUnitCompiles(
      {keyed("driver", "driver v1"), keyed("kernel", "kernel v1")}, dir, cache, 2, {prebuilt});
  ASSERT_TRUE(build.ok) << build.error;
  EXPECT_EQ(build.cached, 1u);
  EXPECT_EQ(build.compiled, 1u);
  EXPECT_TRUE(exists("driver"));
  unsigned prebuiltFiles = 0;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(prebuilt, ec), end; it != end && !ec;
       it.increment(ec))
    prebuiltFiles += it->type() == llvm::sys::fs::file_type::regular_file;
  EXPECT_EQ(prebuiltFiles, 1u) << "a compile wrote into the prebuilt objects";

  // Without a cache of its own, the prebuilt objects still serve; another
  // key (other flags, other headers) is compiled.
  llvm::sys::fs::remove(path("driver"));
  UnitBuildResult bare = runUnitCompiles(
      {keyed("driver", "driver v1"), keyed("other", "driver v2")}, dir, "", 2, {prebuilt});
  ASSERT_TRUE(bare.ok) << bare.error;
  EXPECT_EQ(bare.cached, 1u);
  EXPECT_EQ(bare.compiled, 1u);
}

} // namespace

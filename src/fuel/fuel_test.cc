#include "kestrel/fuel/fuel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "kestrel/core/error.h"

namespace kestrel::fuel {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class FuelCache : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kestrel_fuel_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "home");
    setenv("HOME", (dir_ / "home").c_str(), 1);
    unsetenv("GZ_FUEL_CACHE_PATH");
    unsetenv("IGN_FUEL_CACHE_PATH");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void model(const fs::path& version_dir) {
    fs::create_directories(version_dir);
    std::ofstream(version_dir / "model.sdf") << "<sdf version='1.9'/>";
  }
  fs::path dir_;
};

TEST_F(FuelCache, CachesAreTheVariablesThenGardensThenFortresssDefault) {
  const fs::path home = dir_ / "home";
  EXPECT_THAT(cache_paths(), ElementsAre(home / ".gz/fuel", home / ".ignition/fuel"));
  EXPECT_EQ(download_cache(), home / ".ignition/fuel");
  setenv("IGN_FUEL_CACHE_PATH", "/ign", 1);
  setenv("GZ_FUEL_CACHE_PATH", "/gz", 1);
  EXPECT_THAT(cache_paths(), ElementsAre(fs::path("/gz"), fs::path("/ign"), home / ".gz/fuel",
                                         home / ".ignition/fuel"));
  EXPECT_EQ(download_cache(), fs::path("/gz"));
  unsetenv("GZ_FUEL_CACHE_PATH");
  EXPECT_EQ(download_cache(), fs::path("/ign"));
}

TEST_F(FuelCache, ModelByNameIsItsHighestVersionAndAmbiguityIsNoAnswer) {
  const fs::path cache = dir_ / "cache";
  model(cache / "fuel.gazebosim.org/openrobotics/models/Sun/1");
  model(cache / "fuel.gazebosim.org/openrobotics/models/Sun/3");
  model(cache / "fuel.gazebosim.org/openrobotics/models/Sun/tip_not_a_version");
  EXPECT_EQ(cached_by_name("sun", {cache}), cache / "fuel.gazebosim.org/openrobotics/models/Sun/3");
  EXPECT_EQ(cached_by_name("moon", {cache}), fs::path());
  model(cache / "fuel.gazebosim.org/someone/models/sun/1");
  std::vector<fs::path> both;
  EXPECT_EQ(cached_by_name("Sun", {cache}, &both), fs::path());
  EXPECT_EQ(both.size(), 2u);
}

TEST_F(FuelCache, MissingAdviceNamesTheCachesAndTheCommand) {
  const std::string m = missing_advice(" https://fuel.gazebosim.org/1.0/o/models/m ", {"/a", "/b"});
  EXPECT_THAT(m, HasSubstr("searched /a, /b"));
  EXPECT_THAT(m, HasSubstr("`kestrel fetch 'https://fuel.gazebosim.org/1.0/o/models/m'`"));
}

TEST_F(FuelCache, FetchRefusesWhatIsNoModelUrl) {
  EXPECT_THAT([] { fetch("model://x", "/nonexistent"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("is not a Fuel model URL")));
  EXPECT_THAT([&] { fetch("https://fuel.gazebosim.org/1.0/o/models/m/1/files/a.dae", dir_); },
              ::testing::ThrowsMessage<Error>(HasSubstr("is not a Fuel model URL")));
}

}  // namespace
}  // namespace kestrel::fuel

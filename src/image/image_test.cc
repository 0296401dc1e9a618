// The image door: pixels written as a PNG read back as they were, at their row and column;
// files that are not images are errors naming them.

#include "image/image.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "kestrel/core/error.h"

namespace kestrel::image {
namespace {

std::string temp(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("kestrel_image_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

TEST(Image, PngPixelsReadBackAtTheirRowAndColumn) {
  Rgb8 img;
  img.width = 3;
  img.height = 2;
  for (unsigned v = 0; v < 2; ++v) {
    for (unsigned u = 0; u < 3; ++u) {
      img.data.insert(img.data.end(), {std::uint8_t(10 * u), std::uint8_t(100 + v), 200});
    }
  }
  const std::string path = temp("a.png");
  write_png(path, img);
  const Rgb8 back = read_rgb8(path);
  EXPECT_EQ(back.width, 3u);
  EXPECT_EQ(back.height, 2u);
  EXPECT_EQ(back.data, img.data);
  EXPECT_EQ(back.at(2, 1)[0], 20);
  EXPECT_EQ(back.at(2, 1)[1], 101);
  std::filesystem::remove(path);
}

TEST(Image, WhatIsNotAnImageIsAnErrorNamingTheFile) {
  const std::string path = temp("not.png");
  std::ofstream(path) << "hello";
  for (const std::string& p : {path, temp("missing.png")}) {
    try {
      read_rgb8(p);
      ADD_FAILURE() << p;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    }
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace kestrel::image

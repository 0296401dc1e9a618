#pragma once
// Image files as 8-bit RGB pixels: the only door to ignition-common's graphics library, which
// reads them as Gazebo's systems do (common::Image, through FreeImage: PNG, JPEG, BMP, TGA, ...).

#include <cstdint>
#include <string>
#include <vector>

namespace kestrel::image {

/// 8-bit RGB pixels, row by row from the image's top row, 3 bytes a pixel.
struct Rgb8 {
  unsigned width = 0, height = 0;
  std::vector<std::uint8_t> data;  ///< width · height · 3 bytes
  /// The pixel at column u, row v (row 0 at the top). @pre u < width, v < height.
  const std::uint8_t* at(unsigned u, unsigned v) const {
    return data.data() + (static_cast<std::size_t>(v) * width + u) * 3;
  }
};

/// Reads an image file as Gazebo's common::Image::RGBData gives it (any depth or palette turned
/// into 8-bit RGB). @throws Error naming the file when it cannot be read or has no pixels.
Rgb8 read_rgb8(const std::string& path);

/// Writes pixels as an 8-bit RGB PNG file. @throws Error naming the file when it cannot be.
void write_png(const std::string& path, const Rgb8& image);

}  // namespace kestrel::image

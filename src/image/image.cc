#include "image/image.h"

#include <ignition/common/Image.hh>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "kestrel/core/error.h"

namespace kestrel::image {

Rgb8 read_rgb8(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw Error(path, "cannot read the image: no such file");
  }
  ignition::common::Image img;
  if (img.Load(path) != 0 || !img.Valid() || img.Width() == 0 || img.Height() == 0) {
    throw Error(path, "cannot read the image: not an image file ignition-common can decode "
                      "(PNG, JPEG, BMP, TGA, ...)");
  }
  unsigned char* raw = nullptr;
  unsigned int count = 0;
  img.RGBData(&raw, count);
  const std::unique_ptr<unsigned char[]> owned(raw);  // RGBData allocates with new[]
  Rgb8 out;
  out.width = img.Width();
  out.height = img.Height();
  if (!raw || count != static_cast<std::size_t>(out.width) * out.height * 3) {
    throw Error(path, "cannot read the image: its pixels did not convert to 8-bit RGB");
  }
  out.data.assign(raw, raw + count);
  return out;
}

void write_png(const std::string& path, const Rgb8& image) {
  if (image.width == 0 || image.height == 0 ||
      image.data.size() != static_cast<std::size_t>(image.width) * image.height * 3) {
    throw Error(path, "cannot write the image: its pixels do not make a width × height RGB image");
  }
  ignition::common::Image img;
  img.SetFromData(image.data.data(), image.width, image.height,
                  ignition::common::Image::RGB_INT8);
  img.SavePNG(path);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw Error(path, "cannot write the image");
  }
}

}  // namespace kestrel::image

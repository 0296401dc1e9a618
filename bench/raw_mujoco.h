#pragma once
// Raw MuJoCo, the reference every physics benchmark compares against: the MJCF Kestrel exports,
// loaded from memory. Benchmarks are the only places besides src/physics/mujoco that include
// MuJoCo.

#include <mujoco/mujoco.h>

#include <cstring>
#include <memory>
#include <string>

#include "kestrel/core/error.h"

namespace kestrel::bench {

struct RawMuJoCo {
  mjModel* m = nullptr;
  mjData* d = nullptr;
  RawMuJoCo() = default;
  RawMuJoCo(const RawMuJoCo&) = delete;
  RawMuJoCo& operator=(const RawMuJoCo&) = delete;
  ~RawMuJoCo() {
    if (d) mj_deleteData(d);
    if (m) mj_deleteModel(m);
  }
};

/// Compiles `xml` (an exported MJCF) through MuJoCo's VFS and makes its data.
/// @throws kestrel::Error with MuJoCo's message if MuJoCo rejects the model.
inline std::unique_ptr<RawMuJoCo> load_raw_mujoco(const std::string& xml) {
  auto vfs = std::make_unique<mjVFS>();
  mj_defaultVFS(vfs.get());
  mj_makeEmptyFileVFS(vfs.get(), "m.xml", static_cast<int>(xml.size()));
  std::memcpy(vfs->filedata[mj_findFileVFS(vfs.get(), "m.xml")], xml.data(), xml.size());
  char err[1000] = "";
  auto raw = std::make_unique<RawMuJoCo>();
  raw->m = mj_loadXML("m.xml", vfs.get(), err, sizeof(err));
  mj_deleteVFS(vfs.get());
  if (!raw->m) throw Error(std::string("MuJoCo rejected the exported model: ") + err);
  raw->d = mj_makeData(raw->m);
  if (!raw->d) throw Error("MuJoCo could not allocate mjData for the exported model");
  return raw;
}

}  // namespace kestrel::bench

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

/// Free flight, as most of a mission is: every free joint lifted 5 m, gravity cancelled body by
/// body through xfrc_applied, hinges (rotors) spinning at about an X3's hover speed in
/// alternating directions. No contact is left.
inline void make_flying(const mjModel* m, mjData* d) {
  for (int j = 0; j < m->njnt; ++j) {
    if (m->jnt_type[j] == mjJNT_FREE) d->qpos[m->jnt_qposadr[j] + 2] += 5.0;
    if (m->jnt_type[j] == mjJNT_HINGE) d->qvel[m->jnt_dofadr[j]] = (j % 2 ? -1 : 1) * 650.0;
  }
  for (int b = 1; b < m->nbody; ++b) {
    for (int k = 0; k < 3; ++k) d->xfrc_applied[6 * b + k] = -m->opt.gravity[k] * m->body_mass[b];
  }
}

/// A friction-loss row on every hinge dof, as Kestrel's joint velocity servo gives a
/// velocity-commanded joint (src/physics/README.md, "Joint velocity servos"): the same constraint
/// rows for MuJoCo's solver, with a loss no rotor's torque reaches.
inline void hold_hinges(mjModel* m) {
  for (int j = 0; j < m->njnt; ++j) {
    if (m->jnt_type[j] == mjJNT_HINGE) m->dof_frictionloss[m->jnt_dofadr[j]] = 1e6;
  }
}

}  // namespace kestrel::bench

// The MuJoCo 2.2 engine: the only file (with mjcf_builder) that knows MuJoCo exists.
//
// Per step (narrated like MuJoCo's own pipeline). Invariant between steps: position- and
// velocity-dependent quantities (kinematics, contacts, cvel) are computed for the current state.
//   commands        xfrc_applied, qfrc_applied, teleports, imposed body velocities, and the
//                   joint servos' friction-loss rows (a servo that starts or ends)
//   re-kinematics   only if a command changed qpos or the rows (mj_step1) or qvel (mj_fwdVelocity)
//   servos          the servo rows' reference: the commanded joint velocity
//   acceleration    (below) with servo rows alone: solved per kinematic tree (solve_servos)
//   body wrenches   xfrc_applied → qfrc_applied along each body's chain (sparse J^T), after the
//                   position pass of teleports and before the velocity pass
//   acceleration    actuation, smooth acceleration, constraint solve at time t
//   wrenches        mj_rnePostConstraint, only when some joint has a JointTransmittedWrench
//   readout (t)     contacts, joint forces, transmitted wrenches
//   integrate       mj_Euler: qpos, qvel, time advance to t + dt
//   kinematics      mj_step1 at t + dt (what mj_step would do first in the next step)
//   readout (t+dt)  poses, velocities, accelerations, joint positions and velocities
// This is exactly mj_step's sequence, split so that the state Kestrel reports is consistent.

#include <fmt/format.h>
#include <mujoco/mujoco.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "kestrel/components/detachable_joint.h"
#include "kestrel/components/fluid.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/track.h"
#include "kestrel/components/world.h"
#include "kestrel/core/memory.h"
#include "kestrel/physics/physics.h"
#include "physics/mujoco/contact_surface.h"
#include "physics/mujoco/guard.h"
#include "physics/mujoco/island.h"
#include "physics/mujoco/mesh_file.h"
#include "physics/mujoco/mjcf_builder.h"
#include "physics/pose_math.h"

namespace kestrel::physics {
namespace {

namespace c = kestrel::components;
using ignition::math::Pose3d;
using ignition::math::Quaterniond;
using ignition::math::Vector3d;
using mujoco::call;
using mujoco::MujocoError;
using mujoco::take_warnings;

struct ModelDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
};
struct DataDeleter {
  void operator()(mjData* d) const { mj_deleteData(d); }
};
using ModelPtr = std::unique_ptr<mjModel, ModelDeleter>;
using DataPtr = std::unique_ptr<mjData, DataDeleter>;

// The step's phases, as plain functions of MuJoCo calls only: `call` (guard.h) may jump over
// them, so they hold no C++ objects.
// re-kinematics after teleports
void phase_position(const mjModel* m, mjData* d) {
  mj_fwdPosition(m, d);
  mj_sensorPos(m, d);
  mj_energyPos(m, d);
}
// mj_step1's second half: passive and bias forces for the velocities in force
void phase_velocity(const mjModel* m, mjData* d) {
  mj_fwdVelocity(m, d);
  mj_sensorVel(m, d);
  mj_energyVel(m, d);
}
// acceleration and constraint forces at time t, in parts for a step whose constraint solve
// may be the servos' own (solve_servos)
void phase_smooth(const mjModel* m, mjData* d) {
  mj_fwdActuation(m, d);
  mj_fwdAcceleration(m, d);
}
void phase_acceleration_end(const mjModel* m, mjData* d) {
  mj_sensorAcc(m, d);
  mj_checkAcc(m, d);
}
void phase_acceleration(const mjModel* m, mjData* d) {
  phase_smooth(m, d);
  mj_fwdConstraint(m, d);
  phase_acceleration_end(m, d);
}
// the inertia factor and the constraints' projection again, after the mass matrix changed
void phase_refactor(const mjModel* m, mjData* d) {
  mj_factorM(m, d);
  mj_projectConstraint(m, d);
}
// integrate to t + dt, then kinematics, collision and velocities at t + dt
void phase_integrate(const mjModel* m, mjData* d) {
  mj_Euler(m, d);
  mj_step1(m, d);
}
// the same with only the first half of mj_step1 (checks, kinematics, collision, cvel)
void phase_integrate_half(const mjModel* m, mjData* d) {
  mj_Euler(m, d);
  mj_checkPos(m, d);
  mj_checkVel(m, d);
  mj_fwdPosition(m, d);
  mj_sensorPos(m, d);
  mj_energyPos(m, d);
  mj_comVel(m, d);
}
// mj_fwdPosition in its two halves, for contacts shaped in between (contact_surface.h):
// kinematics, inertia and collision, then the constraint rows and their projection
void position_collide(const mjModel* m, mjData* d) {
  mj_kinematics(m, d);
  mj_comPos(m, d);
  mj_camlight(m, d);
  mj_tendon(m, d);
  mj_crb(m, d);
  mj_factorM(m, d);
  mj_collision(m, d);
}
void position_rows(const mjModel* m, mjData* d) {
  mj_makeConstraint(m, d);
  mj_transmission(m, d);
  mj_projectConstraint(m, d);
}
// the parts of mj_step1 around its position pass
void check_state(const mjModel* m, mjData* d) {
  mj_checkPos(m, d);
  mj_checkVel(m, d);
}
void after_position(const mjModel* m, mjData* d) {
  mj_sensorPos(m, d);
  mj_energyPos(m, d);
}

Vector3d v3(const mjtNum* p) { return Vector3d(p[0], p[1], p[2]); }
// R^T v for MuJoCo's row-major 3x3 (rows are world axes, columns body axes).
Vector3d rot_t(const mjtNum* R, const Vector3d& v) {
  return Vector3d(R[0] * v.X() + R[3] * v.Y() + R[6] * v.Z(),
                  R[1] * v.X() + R[4] * v.Y() + R[7] * v.Z(),
                  R[2] * v.X() + R[5] * v.Y() + R[8] * v.Z());
}
Vector3d rot(const mjtNum* R, const Vector3d& v) {
  return Vector3d(R[0] * v.X() + R[1] * v.Y() + R[2] * v.Z(),
                  R[3] * v.X() + R[4] * v.Y() + R[5] * v.Z(),
                  R[6] * v.X() + R[7] * v.Y() + R[8] * v.Z());
}
Pose3d body_pose(const mjData* d, int id) {
  const mjtNum* p = d->xpos + 3 * id;
  const mjtNum* q = d->xquat + 4 * id;
  return Pose3d(p[0], p[1], p[2], q[0], q[1], q[2], q[3]);
}

// entity id → small index, -1 when absent; rebuilt only on structural change. Entity ids are
// dense and never reused, so for the whole world a flat vector from the smallest id is the
// cheapest map. An island holds a few models among thousands (ids far apart: the static world's
// and its own): a flat vector per island would be as long as the world (3,000 islands of a
// 12,000-entity world: ~0.3 MB each), so a run of ids too sparse for it lives in a sorted list.
class EntityIndex {
 public:
  void set(ecs::Entity e, int i) {
    if (!idx_.empty() || sorted_.empty()) {
      if (idx_.empty()) lo_ = e;
      if (e >= lo_ && e - lo_ < idx_.size() + 64 + 4 * count_) {
        if (e - lo_ >= idx_.size()) idx_.resize(e - lo_ + 1, -1);
        count_ += idx_[e - lo_] < 0;
        idx_[e - lo_] = i;
        return;
      }
      for (std::size_t k = 0; k < idx_.size(); ++k) {  // too sparse: to the sorted list
        if (idx_[k] >= 0) sorted_.emplace_back(lo_ + k, idx_[k]);
      }
      idx_.clear();
    }
    const auto it = std::lower_bound(sorted_.begin(), sorted_.end(), std::pair(e, -1));
    if (it != sorted_.end() && it->first == e) {
      it->second = i;
    } else {
      sorted_.insert(it, {e, i});
    }
  }
  int operator[](ecs::Entity e) const {
    if (!idx_.empty()) return e >= lo_ && e - lo_ < idx_.size() ? idx_[e - lo_] : -1;
    const auto it = std::lower_bound(sorted_.begin(), sorted_.end(), std::pair(e, -1));
    return it != sorted_.end() && it->first == e ? it->second : -1;
  }

 private:
  ecs::Entity lo_ = 0;
  std::size_t count_ = 0;
  std::vector<int> idx_;                             // dense: by id - lo_
  std::vector<std::pair<ecs::Entity, int>> sorted_;  // sparse
};

struct Body {
  ecs::Entity link = ecs::kNullEntity;
  int id = -1;               // MuJoCo body id
  int qadr = -1, dadr = -1;  // free joint addresses, -1 if not a free root
  bool dynamic = false;
  bool gravity = true;
  int parent_model = -1;  // index into models (for Pose relative to the model)
};

struct Jnt {
  ecs::Entity joint = ecs::kNullEntity;
  c::JointType type = c::JointType::kFixed;
  int naxes = 0;       // MuJoCo joints (0 fixed, 1, 2 universal)
  int nq = 0, nv = 0;  // values in JointPosition / JointVelocity
  int qadr[2] = {-1, -1}, dadr[2] = {-1, -1};
  double effort[2] = {-1, -1}, velocity[2] = {-1, -1};
  int child_body = -1;  // MuJoCo body id
  Pose3d X_CJ;
};

struct Mdl {
  ecs::Entity model = ecs::kNullEntity;
  int parent = -1;     // index of the parent model, -1 = the world
  int canonical = -1;  // MuJoCo body id, -1 if none
  Pose3d X_LM;
  bool dynamic = false;
  std::vector<int> roots;  // indices into bodies: root bodies (free or static) of this model
  Pose3d X_WM;             // current world pose
  Pose3d X_MW;             // its inverse, computed once per step for the links' Pose
};

// Everything derived from one build; copied whole for exact reset.
// A detachable joint's weld equality constraint.
struct Weld {
  ecs::Entity entity = ecs::kNullEntity;  // holds the components::DetachableJoint
  int eq = -1, body1 = -1, body2 = -1;    // MuJoCo equality and body ids (parent, child)
};

struct Mapping {
  std::vector<Body> bodies;
  std::vector<Weld> welds;
  std::vector<Jnt> joints;
  std::vector<Mdl> models;
  std::vector<ecs::Entity> geom_entity;               // by MuJoCo geom id
  EntityIndex geom_of;                                // collision entity → MuJoCo geom id
  std::vector<ecs::Entity> jnt_entity;                // by MuJoCo joint id (free joint: its link)
  EntityIndex body_of, joint_of, model_of;            // entity → index into bodies/joints/models
  std::unordered_map<ecs::Entity, Pose3d> reference;  // zero-configuration world poses
  std::vector<double> prev_vel;                       // 6 per body: world linear, world angular
  std::vector<int> no_gravity;                        // indices into bodies: moving, gravity off
  std::vector<int> geom_member;  // by geom id: index of its island member, -1 static or none
  // Free root bodies with a FluidAddedMass: index into bodies and the matrix (link frame).
  std::vector<std::pair<int, std::array<double, 36>>> added_mass;
};

// Where read_state / read_joint_forces write, per entry of Mapping's vectors (nullptr: the
// entity lacks that component). Kept across steps; fetched again when the registry's layout
// epoch moved (some component was added or removed somewhere).
struct BodyRefs {
  c::WorldPose* world_pose;
  c::Pose* pose;
  c::WorldLinearVelocity* world_lin_vel;
  c::WorldAngularVelocity* world_ang_vel;
  c::LinearVelocity* lin_vel;
  c::AngularVelocity* ang_vel;
  c::WorldLinearAcceleration* world_lin_acc;
  c::LinearAcceleration* lin_acc;
  c::WorldAngularAcceleration* world_ang_acc;
  c::AngularAcceleration* ang_acc;
  c::ExternalWorldWrenchCmd* wrench_cmd;  // read by an island's apply_commands
};
struct ModelRefs {
  c::WorldPose* world_pose;
  c::Pose* pose;
};
// What MuJoCo's data is sized by (contacts, rows, stack) and the model's counts.
struct Sizes {
  int njmax = 0, nconmax = 0, dofs = 0, moving_geoms = 0;
  std::size_t nbody = 0, ngeom = 0;
  std::int64_t nstack = 0;
  int rows_per_contact = 4, extra_rows = 0;
};

struct JointRefs {
  c::JointPosition* position;
  c::JointVelocity* velocity;
  c::JointForce* force;
  c::JointTransmittedWrench* wrench;
  c::JointForceCmd* force_cmd;  // the commands, read by an island's apply_commands
  c::JointVelocityCmd* velocity_cmd;
};
class MujocoEngine final : public IslandEngine {
 public:
  // The whole world (islanded = false), or an island: only the moving parts of `members`
  // (sorted top-level models) and every static model (see make_mujoco_island).
  MujocoEngine(bool islanded, std::vector<ecs::Entity> members, int extra_contacts = 0)
      : islanded_(islanded), members_(std::move(members)), extra_contacts_(extra_contacts) {
    mujoco::install_handlers();
  }

  void build(ecs::Registry& r, ecs::Entity world) override {
    CarriedState own;  // the state of what persists, by entity
    save_state(own);
    build_from(r, world, own);
  }

  void save_state(CarriedState& out) const override {
    if (!m_) return;
    for (const Body& b : map_.bodies) {
      if (b.qadr < 0) continue;
      out.q[b.link].assign(d_->qpos + b.qadr, d_->qpos + b.qadr + 7);
      out.v[b.link].assign(d_->qvel + b.dadr, d_->qvel + b.dadr + 6);
    }
    for (const Jnt& j : map_.joints) {
      auto& q = out.q[j.joint];
      auto& v = out.v[j.joint];
      q.clear();
      v.clear();
      for (int k = 0; k < j.naxes; ++k) {
        const int t = m_->jnt_type[jnt_id(j, k)];
        const int nq = t == mjJNT_BALL ? 4 : 1, nv = t == mjJNT_BALL ? 3 : 1;
        q.insert(q.end(), d_->qpos + j.qadr[k], d_->qpos + j.qadr[k] + nq);
        v.insert(v.end(), d_->qvel + j.dadr[k], d_->qvel + j.dadr[k] + nv);
      }
    }
    for (const auto& [e, X] : map_.reference) out.reference.insert_or_assign(e, X);
  }

  const std::vector<ecs::Entity>& members() const override { return members_; }
  const std::vector<std::pair<ecs::Entity, c::ContactPoint>>& static_contacts() const override {
    return static_contacts_;
  }

  // An island's boxes are computed by its step, at its end while its data is in this thread's
  // cache (the step's dt is normally the next one's); the partition before the next step takes
  // them as they are unless the dt differs or the island changed since (a build, a reset).
  void bounds(double dt, std::vector<Aabb>& out) const override {
    if (bounds_valid_ && dt == bounds_dt_) {
      out.insert(out.end(), last_bounds_.begin(), last_bounds_.end());
      return;
    }
    compute_bounds(dt, out);
  }

  void compute_bounds(double dt, std::vector<Aabb>& out) const {
    const mjModel* m = m_.get();
    const mjData* d = d_.get();
    const std::size_t base = out.size();
    out.resize(base + members_.size());
    for (int g = 0; g < m->ngeom; ++g) {
      const int k = map_.geom_member[g];
      if (k < 0) continue;
      const mjtNum* p = d->geom_xpos + 3 * g;
      const mjtNum* R = d->geom_xmat + 9 * g;  // columns: the geom's axes in the world
      const mjtNum* s = m->geom_size + 3 * g;
      const double rb = m->geom_rbound[g];
      double e[3];
      for (int i = 0; i < 3; ++i) {
        const mjtNum* row = R + 3 * i;
        switch (m->geom_type[g]) {
          case mjGEOM_SPHERE:
            e[i] = s[0];
            break;
          case mjGEOM_CAPSULE:
            e[i] = std::abs(row[2]) * s[1] + s[0];
            break;
          case mjGEOM_CYLINDER:
            e[i] = std::abs(row[2]) * s[1] + s[0] * std::sqrt(std::max(0.0, 1 - row[2] * row[2]));
            break;
          case mjGEOM_BOX:
            e[i] = std::abs(row[0]) * s[0] + std::abs(row[1]) * s[1] + std::abs(row[2]) * s[2];
            break;
          case mjGEOM_ELLIPSOID:
            e[i] = std::sqrt(row[0] * row[0] * s[0] * s[0] + row[1] * row[1] * s[1] * s[1] +
                             row[2] * row[2] * s[2] * s[2]);
            break;
          default:  // meshes: the bounding sphere
            e[i] = rb;
        }
        e[i] = std::min(e[i], rb) + m->geom_margin[g];
      }
      // How far any point of the geom can move in dt: the speed of its centre plus |ω| times
      // its bounding radius (cvel: [ω; v at the root subtree's centre of mass]).
      const int b = m->geom_bodyid[g];
      const mjtNum* cv = d->cvel + 6 * b;
      const Vector3d w(cv[0], cv[1], cv[2]);
      const Vector3d v = Vector3d(cv[3], cv[4], cv[5]) +
                         w.Cross(v3(p) - v3(d->subtree_com + 3 * m->body_rootid[b]));
      const double pad = (v.Length() + w.Length() * rb) * dt;
      Aabb& box = out[base + k];
      box.lo =
          Vector3d(std::min(box.lo.X(), p[0] - e[0] - pad), std::min(box.lo.Y(), p[1] - e[1] - pad),
                   std::min(box.lo.Z(), p[2] - e[2] - pad));
      box.hi =
          Vector3d(std::max(box.hi.X(), p[0] + e[0] + pad), std::max(box.hi.Y(), p[1] + e[1] + pad),
                   std::max(box.hi.Z(), p[2] + e[2] + pad));
    }
  }

  void build_from(ecs::Registry& r, ecs::Entity world, const CarriedState& carried) override {
    world_ = world;
    bounds_valid_ = false;
    const auto& carried_q = carried.q;
    const auto& carried_v = carried.v;

    // Everything is built aside and taken over only when it steps: a build that fails (a world
    // MuJoCo refuses, a spawned model that would blow up) leaves this engine as it was.
    mujoco::BuildOptions opts;
    opts.reference_poses = &carried.reference;
    opts.island = islanded_ ? &members_ : nullptr;
    opts.extra_contacts = extra_contacts_;
    mujoco::MjcfModel mjcf = mujoco::build_mjcf(r, world, opts);
    mujoco::throw_on_errors(mjcf.issues);
    Sizes sizes = sizes_of(mjcf);
    check_memory(sizes);
    ModelPtr m = load(r, mjcf, sizes);
    DataPtr d(call(mj_makeData, static_cast<const mjModel*>(m.get())));
    if (!d) throw too_big(sizes, take_warnings());
    Mapping mp = map(r, mjcf, m.get());
    mujoco::ContactSurfaces surfaces = surfaces_of(r, m.get(), mp);
    if (surfaces.any_slip()) solve_for_slip(r, m.get());

    for (const Body& b : mp.bodies) {
      if (b.qadr < 0) continue;
      if (auto it = carried_q.find(b.link); it != carried_q.end()) {
        std::memcpy(d->qpos + b.qadr, it->second.data(), 7 * sizeof(double));
        std::memcpy(d->qvel + b.dadr, carried_v.at(b.link).data(), 6 * sizeof(double));
      }
    }
    for (const Jnt& j : mp.joints) {
      auto it = carried_q.find(j.joint);
      if (it == carried_q.end()) continue;
      std::size_t qi = 0, vi = 0;
      for (int k = 0; k < j.naxes; ++k) {
        const int t = m->jnt_type[m->dof_jntid[j.dadr[k]]];
        const int nq = t == mjJNT_BALL ? 4 : 1, nv = t == mjJNT_BALL ? 3 : 1;
        if (qi + nq > it->second.size()) break;
        std::memcpy(d->qpos + j.qadr[k], it->second.data() + qi, nq * sizeof(double));
        std::memcpy(d->qvel + j.dadr[k], carried_v.at(j.joint).data() + vi, nv * sizeof(double));
        qi += nq;
        vi += nv;
      }
    }

    step1(r, m.get(), d.get(), surfaces, "computing the initial state");
    while (buffers_full(d.get())) d = grow(r, m.get(), d.get(), sizes, surfaces);
    check_warnings(r, m.get(), d.get(), mp, "at build");
    trial_step(r, mp, surfaces, m.get(), d.get());

    // Taken over.
    m_ = std::move(m);
    d_ = std::move(d);
    map_ = std::move(mp);
    surfaces_ = surfaces;
    surface_base_ = std::move(surfaces);
    surface_cmds_.clear();
    sizes_ = sizes;
    grow_pending_ = false;
    issues_ = std::move(mjcf.issues);
    xml_ = std::move(mjcf.xml);
    forget_wrenches();
    mark_static_geoms();
    velocity_pending_ = false;
    servos_.clear();  // a new model: the next commands start their servos again
    servo_of_dof_.clear();
    tree_lo_.clear();
    tree_hi_.clear();
    add_state_components(r);
    read_state(/*all=*/true, 0);

    if (!m0_) {  // the state every reset returns to
      m0_.reset(call(mj_copyModel, static_cast<mjModel*>(nullptr),
                     static_cast<const mjModel*>(m_.get())));
      d0_.reset(call(mj_copyData, static_cast<mjData*>(nullptr),
                     static_cast<const mjModel*>(m0_.get()), static_cast<const mjData*>(d_.get())));
      if (!m0_ || !d0_) throw Error(r.describe(world_), "MuJoCo: cannot copy the model for reset");
      map0_ = map_;
      surfaces0_ = surface_base_;
      sizes0_ = sizes_;
      xml0_ = xml_;
      issues0_ = issues_;
    }
  }

  void step(Duration dt, ecs::Registry& r) override {
    bounds_valid_ = false;
    if (grow_pending_) {  // the last step's collision filled a buffer
      do {                // until every contact fits (each growth doubles the room)
        d_ = grow(r, m_.get(), d_.get(), sizes_, surfaces_);
      } while (buffers_full(d_.get()));
      grow_pending_ = false;
      forget_wrenches();
      velocity_pending_ = false;  // grow() ran all of mj_step1
    }
    mjModel* m = m_.get();
    mjData* d = d_.get();
    dt_ = to_seconds(dt);
    m->opt.timestep = dt_;

    // commands
    const int changed = apply_commands(r);
    // re-kinematics after teleports
    if (changed & kPosChanged) {
      if (surfaces_.active()) {
        position(r, m, d, surfaces_, "a step");
        guarded(r, m, d, "a step", after_position);
      } else {
        guarded(r, m, d, "a step", phase_position);
      }
      if (buffers_full(d)) {  // a teleport into contacts: grown now, this step needs them
        wrenches_keep_.assign(d->xfrc_applied, d->xfrc_applied + 6 * m->nbody);
        qfrc_keep_.assign(d->qfrc_applied, d->qfrc_applied + m->nv);
        do {  // until every contact fits (each growth doubles the room)
          d_ = grow(r, m, d, sizes_, surfaces_);
          d = d_.get();
        } while (buffers_full(d));
        std::copy(wrenches_keep_.begin(), wrenches_keep_.end(), d->xfrc_applied);
        std::copy(qfrc_keep_.begin(), qfrc_keep_.end(), d->qfrc_applied);
      }
    }
    // Body wrenches as generalized forces along each body's own chain (see wrenches_to_qfrc),
    // unless cfrc_int is wanted: mj_rnePostConstraint reads the wrenches from xfrc_applied.
    const bool wrenches = r.count<c::JointTransmittedWrench>() != 0;
    wrenches_to_qfrc(/*keep_xfrc=*/wrenches);
    // mj_step1's second half (passive and bias forces) for the velocities in force now: needed
    // after imposed velocities, teleports, or when the previous step stopped after the first half
    if (velocity_pending_ || changed != 0) guarded(r, m, d, "a step", phase_velocity);
    if (surfaces_.active()) surfaces_.slip(m, d);
    if (!servos_.empty()) servo_reference(d);
    if (r.count<c::TrackSurface>() != 0) track_reference(r, m, d);
    if (!map_.added_mass.empty()) add_fluid_mass(r, m, d);
    // acceleration and constraint forces at time t
    if (servos_.empty()) {
      guarded(r, m, d, "a step", phase_acceleration);
    } else {
      guarded(r, m, d, "a step", phase_smooth);
      if (!solve_servos(m, d)) guarded(r, m, d, "a step", mj_fwdConstraint);
      guarded(r, m, d, "a step", phase_acceleration_end);
    }
    check_warnings(r, m, d, map_);
    // transmitted wrenches (cfrc_int): an extra pass over the tree, paid only when some entity
    // holds a JointTransmittedWrench (a force_torque sensor's joint, or one a system added)
    if (wrenches) guarded(r, m, d, "a step", mj_rnePostConstraint);
    // readout at time t: contacts, joint forces, transmitted wrenches
    refresh_refs(r);
    read_contacts(r);
    read_joint_forces(wrenches);
    // integrate to t + dt, then kinematics, collision and velocities at t + dt (mj_step1). A
    // world whose systems impose body velocities every step (VelocityControl) would have the
    // velocity half redone by the next step's commands: while this step had such commands, do
    // only the first half (checks, kinematics, collision, the cvel the readout needs) and leave
    // the rest to the next step. Both paths compute the same numbers.
    velocity_pending_ = (changed & kVelChanged) != 0;
    if (!surfaces_.active()) {
      guarded(r, m, d, "a step", velocity_pending_ ? phase_integrate_half : phase_integrate);
    } else {
      guarded(r, m, d, "a step", mj_Euler);
      guarded(r, m, d, "a step", check_state);
      position(r, m, d, surfaces_, "a step");
      guarded(r, m, d, "a step", after_position);
      guarded(r, m, d, "a step", velocity_pending_ ? mj_comVel : phase_velocity);
    }
    if (buffers_full(d)) {  // grown before the next step uses the contacts
      d->warning[mjWARN_CONTACTFULL].number = d->warning[mjWARN_CNSTRFULL].number = 0;
      grow_pending_ = true;
    }
    check_warnings(r, m, d, map_);
    read_state(/*all=*/full_read_, dt_);
    full_read_ = false;
    if (islanded_) {
      last_bounds_.clear();
      compute_bounds(dt_, last_bounds_);
      bounds_dt_ = dt_;
      bounds_valid_ = true;
    }
  }

  void reset(ecs::Registry& r) override {
    KESTREL_DEMAND(m0_ != nullptr);
    bounds_valid_ = false;
    m_.reset(
        call(mj_copyModel, static_cast<mjModel*>(nullptr), static_cast<const mjModel*>(m0_.get())));
    d_.reset(call(mj_copyData, static_cast<mjData*>(nullptr), static_cast<const mjModel*>(m_.get()),
                  static_cast<const mjData*>(d0_.get())));
    if (!m_ || !d_) throw Error(r.describe(world_), "MuJoCo: cannot copy the model for reset");
    forget_wrenches();
    mark_static_geoms();
    velocity_pending_ = false;  // d0_ was taken after a full mj_step1
    servos_.clear();            // m0_ has no servo
    servo_of_dof_.clear();
    tree_lo_.clear();
    tree_hi_.clear();
    map_ = map0_;
    surfaces_ = surface_base_ = surfaces0_;
    surface_cmds_.clear();
    sizes_ = sizes0_;
    grow_pending_ = false;
    xml_ = xml0_;
    issues_ = issues0_;
    add_state_components(r);
    read_state(/*all=*/true, 0);
  }

  const std::vector<PhysicsIssue>& issues() const override { return issues_; }
  const std::string& model_text() const override { return xml_; }

 private:
  // apply_commands: a teleport or position reset; imposed velocities
  static constexpr int kPosChanged = 1, kVelChanged = 2;
  // A servo's bound when the joint has no effort limit (DART's is then infinite): far above any
  // force a joint of a simulated robot exerts, and finite, as MuJoCo's friction loss must be.
  static constexpr double kUnlimitedServo = 1e10;

  // A velocity-commanded dof and what its servo replaced.
  struct Servo {
    int dof = -1;
    double velocity = 0;     // the command [rad/s or m/s]
    bool unlimited = false;  // the joint has no effort limit
    bool seen = false;       // commanded in this step
    double frictionloss = 0; // the dof's own friction loss, solref and solimp
    mjtNum solref[mjNREF] = {};
    mjtNum solimp[mjNIMP] = {};
  };

  int jnt_id(const Jnt& j, int k) const { return m_->dof_jntid[j.dadr[k]]; }

  // ---- build --------------------------------------------------------------------------------

  // Compiles the MJCF with its meshes (read through the VFS). mj_loadXML is C++ (MuJoCo's XML
  // compiler) and reports its errors in `err`, never through mju_error; it is not called
  // through `call` (guard.h).
  ModelPtr load(const ecs::Registry& r, const mujoco::MjcfModel& mjcf, const Sizes& sizes) const {
    struct VfsDeleter {
      void operator()(mjVFS* v) const {
        mj_deleteVFS(v);
        delete v;
      }
    };
    std::unique_ptr<mjVFS, VfsDeleter> vfs(new mjVFS);  // ~2 MB: never on the stack
    mj_defaultVFS(vfs.get());
    // MuJoCo's VFS takes names shorter than mjMAXVFSNAME, sizes as ints > 0, at most mjMAXVFS
    // files, and calls mju_error otherwise: checked here first.
    auto add = [&](const std::string& name, const std::string& bytes, ecs::Entity owner) {
      const std::string who = owner == ecs::kNullEntity ? r.describe(world_) : where_of(r, owner);
      if (name.size() >= mjMAXVFSNAME || bytes.empty() ||
          bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
        throw Error(who,
                    fmt::format("MuJoCo's VFS cannot hold '{}' ({} bytes)", name, bytes.size()));
      }
      const int rc =
          call(mj_makeEmptyFileVFS, vfs.get(), name.c_str(), static_cast<int>(bytes.size()));
      if (rc != 0) {
        throw Error(who, rc == 1 ? fmt::format("MuJoCo 2.2's VFS holds at most {} files (the "
                                               "generated model and one per collision mesh)",
                                               mjMAXVFS)
                                 : fmt::format("MuJoCo VFS: '{}' added twice", name));
      }
      const int i = mj_findFileVFS(vfs.get(), name.c_str());
      std::memcpy(vfs->filedata[i], bytes.data(), bytes.size());
    };
    add("kestrel.xml", mjcf.xml, ecs::kNullEntity);
    for (const auto& mesh : mjcf.meshes) {
      if (!mesh.data.empty()) {
        add(mesh.vfs_name, mesh.data, mesh.collision);
        continue;
      }
      std::string bytes;
      try {
        bytes = mujoco::read_mesh_file(mesh.path);
      } catch (const Error& e) {
        throw Error(where_of(r, mesh.collision),
                    fmt::format("{}: {}", r.scoped_name(mesh.collision), e.what()));
      }
      add(mesh.vfs_name, bytes, mesh.collision);
    }
    char err[1000] = "";
    mjModel* m = mj_loadXML("kestrel.xml", vfs.get(), err, sizeof(err));
    const std::string warnings = take_warnings();
    if (!m && std::strstr(err, "could not create mjData")) throw too_big(sizes, warnings);
    if (!m) throw rejected(r, mjcf, err);
    return ModelPtr(m);
  }

  // A compile error as an error on the entity MuJoCo names ("Object name = NAME": a body or
  // geom is named by its entity's scoped name, a mesh asset "meshN" by its collision).
  Error rejected(const ecs::Registry& r, const mujoco::MjcfModel& mjcf, std::string err) const {
    while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
    ecs::Entity e = ecs::kNullEntity;
    if (const auto at = err.find("Object name = "); at != std::string::npos) {
      const auto from = at + 14;
      const std::string name = err.substr(from, err.find(',', from) - from);
      for (const auto& mesh : mjcf.meshes) {
        if (mesh.vfs_name.substr(0, mesh.vfs_name.rfind('.')) == name) e = mesh.collision;
      }
      if (e == ecs::kNullEntity) e = r.find_scoped(name);
    }
    for (char& ch : err) ch = ch == '\n' ? ' ' : ch;
    if (e == ecs::kNullEntity) {
      return Error(where_of(r, world_),
                   fmt::format("MuJoCo rejected the model Kestrel generated: {} (run "
                               "`kestrel export-mjcf` to see it)",
                               err));
    }
    return Error(where_of(r, e), fmt::format("{}: MuJoCo rejected it: {}", r.scoped_name(e), err));
  }

  // "file:line" of an entity when the loader recorded one, else "entity N 'scoped::name'".
  static std::string where_of(const ecs::Registry& r, ecs::Entity e) {
    if (const auto* loc = r.try_get<c::SourceLocation>(e); loc && !loc->file.empty()) {
      return loc->line > 0 ? fmt::format("{}:{}", loc->file, loc->line) : loc->file;
    }
    return r.describe(e);
  }

  // What MuJoCo's data is sized by (mjcf_builder: the contacts that can occur at the build's
  // state; doubled by grow()).
  static Sizes sizes_of(const mujoco::MjcfModel& mjcf) {
    Sizes s;
    s.njmax = mjcf.njmax;
    s.nconmax = mjcf.nconmax;
    s.dofs = mjcf.dofs;
    s.moving_geoms = mjcf.moving_geoms;
    s.nbody = mjcf.bodies.size() + 1;
    s.ngeom = mjcf.geoms.size();
    s.nstack = mjcf.nstack;
    s.rows_per_contact = mjcf.rows_per_contact;
    s.extra_rows = mjcf.extra_rows;
    return s;
  }

  // A collision filled the contact or constraint buffer: MuJoCo dropped what did not fit. Not
  // an error: grow() doubles the buffers and makes the data again with the state it had, and
  // its mj_step1 finds every contact at that state, so the next step solves exactly what a
  // data with room from the start would have.
  static bool buffers_full(const mjData* d) {
    return d->warning[mjWARN_CONTACTFULL].number != 0 || d->warning[mjWARN_CNSTRFULL].number != 0;
  }

  DataPtr grow(const ecs::Registry& r, mjModel* m, const mjData* old, Sizes& sizes,
               const mujoco::ContactSurfaces& surfaces) const {
    Sizes next = sizes;
    next.nconmax = 2 * sizes.nconmax;
    next.njmax = next.nconmax * sizes.rows_per_contact + sizes.extra_rows;
    next.nstack = mujoco::stack_size(static_cast<std::int64_t>(next.nbody),
                                     static_cast<std::int64_t>(next.ngeom), next.dofs, next.njmax);
    check_memory(next);
    m->nconmax = next.nconmax;
    m->njmax = next.njmax;
    m->nstack = static_cast<int>(next.nstack);
    DataPtr d(call(mj_makeData, static_cast<const mjModel*>(m)));
    if (!d) throw too_big(next, take_warnings());
    d->time = old->time;
    mju_copy(d->qpos, old->qpos, m->nq);
    mju_copy(d->qvel, old->qvel, m->nv);
    mju_copy(d->act, old->act, m->na);
    mju_copy(d->qacc_warmstart, old->qacc_warmstart, m->nv);
    step1(r, m, d.get(), surfaces, "the state again with larger contact buffers");
    sizes = next;
    return d;
  }

  // The memory MuJoCo 2.2 will allocate for this model, before it does. Its data is one buffer
  // sized for the worst case (the constraint arrays for njmax rows: efc_AR and its int column
  // indices njmax², efc_J/efc_JT with their indices njmax × nv; contacts; per-object arrays)
  // plus the stack Kestrel sizes (mjcf_builder.cc); both counts are C ints. The compiler makes
  // a data of its own, then Kestrel one, and the first build a copy for reset: twice the data
  // and stack are new at once.
  struct Estimate {
    double data = 0, stack = 0;
  };
  static Estimate estimate(const Sizes& mjcf) {
    const double rows = mjcf.njmax, nv = mjcf.dofs, ncon = mjcf.nconmax;
    const double nbody = static_cast<double>(mjcf.nbody);
    const double ngeom = static_cast<double>(mjcf.ngeom);
    Estimate e;
    e.data = 12 * rows * rows + 24 * rows * nv + 8 * 32 * rows + 600 * ncon +
             8 * (40 * nv + 120 * nbody + 40 * ngeom) + 65536;
    e.stack = 8 * static_cast<double>(mjcf.nstack);
    return e;
  }

  void check_memory(const Sizes& mjcf) const {
    const Estimate e = estimate(mjcf);
    constexpr double kIntMax = std::numeric_limits<int>::max();
    if (e.data > kIntMax) throw too_big(mjcf, "");
    if (mjcf.nstack > std::numeric_limits<int>::max()) {
      throw Error(fmt::format(
          "MuJoCo 2.2 cannot hold this world's physics stack: {} bodies, {} degrees of freedom "
          "and {} constraint rows need {} stack entries, over MuJoCo 2.2's limit of 2^31 (its "
          "count is a C int). Fewer bodies or moving collision geoms per world, or "
          "<kestrel:physics_islands/> (src/physics/README.md).",
          mjcf.nbody, mjcf.dofs, mjcf.njmax, mjcf.nstack));
    }
    const MemoryBudget budget = memory_budget();
    const double need = 2 * (e.data + e.stack);
    if (need > static_cast<double>(budget.bytes)) {
      throw Error(fmt::format(
          "not enough memory for this world's physics: MuJoCo 2.2 would allocate ~{} (its data "
          "{} for {} constraint rows, {} contacts and {} degrees of freedom, its stack {}; twice: "
          "the compiler's copy and the one kept for reset), {} is available ({}). Nothing was "
          "allocated. Fewer moving collision geoms per world, or <kestrel:physics_islands/> "
          "(src/physics/README.md).",
          format_bytes(need), format_bytes(e.data), mjcf.njmax, mjcf.nconmax, mjcf.dofs,
          format_bytes(e.stack), format_bytes(static_cast<double>(budget.bytes)), budget.source));
    }
  }

  // MuJoCo 2.2 sizes mjData's constraint arrays for njmax rows whether used or not (efc_AR is
  // njmax², efc_J and efc_JT njmax × nv, with int column indices) and counts its buffer's bytes
  // in an int: beyond 2 GiB it cannot create mjData at all.
  static Error too_big(const Sizes& mjcf, const std::string& warnings) {
    const double gib = estimate(mjcf).data / (1u << 30);
    return Error(fmt::format(
        "MuJoCo 2.2 cannot allocate this world's physics data: room for {} contacts (those that "
        "can occur now among {} moving collision geoms) means {} constraint rows, and with {} "
        "degrees "
        "of freedom its data needs ~{:.1f} GiB, over MuJoCo 2.2's 2 GiB data "
        "limit{}. Fewer moving collision geoms or degrees of freedom per world (a make-swarm world "
        "of X3s fits up to ~600 vehicles).",
        mjcf.nconmax, mjcf.moving_geoms, mjcf.njmax, mjcf.dofs, gib,
        warnings.empty() ? "" : " (MuJoCo: " + warnings + ")"));
  }

  // A MuJoCo call that may raise mju_error (guard.h): the error names the world.
  void guarded(const ecs::Registry& r, const mjModel* m, mjData* d, const char* during,
               void (*fn)(const mjModel*, mjData*)) const {
    try {
      call(fn, m, d);
    } catch (const MujocoError& e) {
      throw Error(where_of(r, world_), fmt::format("{}: {} while computing {}; the physics data "
                                                   "is unusable",
                                                   r.scoped_name(world_), e.what(), during));
    }
  }

  // One step of a new model on its own (no commands), so that a world that cannot step is
  // refused where it is built — at load (kestrel check, run) or when a spawn is validated —
  // instead of stopping the run at its next step. Then the data is put back exactly as a build
  // without the trial leaves it: reset, the same positions and velocities, mj_step1.
  void trial_step(const ecs::Registry& r, const Mapping& mp,
                  const mujoco::ContactSurfaces& surfaces, const mjModel* m, mjData* d) const {
    const std::vector<mjtNum> q(d->qpos, d->qpos + m->nq), v(d->qvel, d->qvel + m->nv);
    const char* context = "its first step (tried before the world runs)";
    guarded(r, m, d, "a trial step", phase_acceleration);
    check_warnings(r, m, d, mp, context);
    guarded(r, m, d, "a trial step", mj_Euler);
    step1(r, m, d, surfaces, "a trial step");
    // A full buffer at the trial's end is grown at the first step (grow()).
    d->warning[mjWARN_CONTACTFULL].number = d->warning[mjWARN_CNSTRFULL].number = 0;
    check_warnings(r, m, d, mp, context);
    call(mj_resetData, m, d);
    std::copy(q.begin(), q.end(), d->qpos);
    std::copy(v.begin(), v.end(), d->qvel);
    step1(r, m, d, surfaces, "the initial state");
  }

  // MuJoCo's position pass (mj_fwdPosition), with the contacts shaped between the collision and
  // the constraint rows when some surface asks for it (contact_surface.h).
  void position(const ecs::Registry& r, const mjModel* m, mjData* d,
                const mujoco::ContactSurfaces& surfaces, const char* during) const {
    if (!surfaces.active()) return guarded(r, m, d, during, mj_fwdPosition);
    guarded(r, m, d, during, position_collide);
    surfaces.shape(m, d);
    guarded(r, m, d, during, position_rows);
  }
  // mj_step1 (Kestrel sets no mjcb_control), with position() as its position pass.
  void step1(const ecs::Registry& r, const mjModel* m, mjData* d,
             const mujoco::ContactSurfaces& surfaces, const char* during) const {
    if (!surfaces.active()) return guarded(r, m, d, during, mj_step1);
    guarded(r, m, d, during, check_state);
    position(r, m, d, surfaces, during);
    guarded(r, m, d, during, after_position);
    guarded(r, m, d, during, phase_velocity);
  }

  // Each geom's surface from its collision (components::Surface, and the SlipComplianceCmd or
  // ContactFrictionCmd it holds at the build): what contact_surface.h applies to its contacts.
  mujoco::ContactSurfaces surfaces_of(const ecs::Registry& r, const mjModel* m,
                                      const Mapping& mp) const {
    mujoco::ContactSurfaces out;
    out.geoms.resize(m->ngeom);
    for (int g = 0; g < m->ngeom; ++g) {
      mujoco::GeomSurface& gs = out.geoms[g];
      gs.mu = gs.mu2 = m->geom_friction[3 * g];
      const ecs::Entity e = mp.geom_entity[g];
      const auto* s = e == ecs::kNullEntity ? nullptr : r.try_get<c::Surface>(e);
      if (s) {
        gs.mu2 = s->mu2;
        gs.slip1 = s->slip1;
        gs.slip2 = s->slip2;
        gs.fdir[0] = s->fdir1.X(), gs.fdir[1] = s->fdir1.Y(), gs.fdir[2] = s->fdir1.Z();
        if (s->fdir1_link != ecs::kNullEntity) {
          const int bi = mp.body_of[s->fdir1_link];
          gs.fdir_body = bi >= 0 ? mp.bodies[bi].id : m->geom_bodyid[g];
        }
      }
      gs.custom = gs.mu2 != gs.mu || gs.slip1 > 0 || gs.slip2 > 0 || gs.fdir[0] != 0 ||
                  gs.fdir[1] != 0 || gs.fdir[2] != 0;
      if (e != ecs::kNullEntity) {
        const auto* slip = r.try_get<c::SlipComplianceCmd>(e);
        const auto* friction = r.try_get<c::ContactFrictionCmd>(e);
        if (slip || friction) surface_command(r, e, slip, friction, gs);
      }
    }
    out.refresh();
    return out;
  }

  // A collision's SlipComplianceCmd and ContactFrictionCmd into its geom's surface.
  static void surface_command(const ecs::Registry& r, ecs::Entity e,
                              const c::SlipComplianceCmd* slip,
                              const c::ContactFrictionCmd* friction, mujoco::GeomSurface& gs) {
    if (slip) {
      if (!(slip->slip1 >= 0 && slip->slip2 >= 0 && std::isfinite(slip->slip1) &&
            std::isfinite(slip->slip2))) {
        throw Error(r.describe(e),
                    fmt::format("SlipComplianceCmd {} {}: slip compliances are finite and >= 0 "
                                "[m/s/N]",
                                slip->slip1, slip->slip2));
      }
      gs.slip1 = slip->slip1;
      gs.slip2 = slip->slip2;
    }
    if (friction) {
      if (!(friction->mu >= 0 && friction->mu2 >= 0 && std::isfinite(friction->mu) &&
            std::isfinite(friction->mu2))) {
        throw Error(r.describe(e),
                    fmt::format("ContactFrictionCmd {} {}: friction coefficients are finite and "
                                ">= 0",
                                friction->mu, friction->mu2));
      }
      gs.mu = friction->mu;
      gs.mu2 = friction->mu2;
      gs.friction_cmd = true;
    }
    gs.custom = true;
  }

  // Slip compliance needs MuJoCo's elliptic cone and PGS solver (contact_surface.h, slip()):
  // set on the model when it has neither yet (true: the rows are to be made again). PGS's
  // default 100 sweeps to 1e-8 left a cube's slip on its 8 contacts 1 % short, 400 to 1e-12
  // within 1e-4 (physics_test ContactSurface.*).
  bool solve_for_slip(const ecs::Registry& r, mjModel* m) const {
    if (m->opt.cone == mjCONE_ELLIPTIC && m->opt.solver == mjSOL_PGS) return false;
    m->opt.cone = mjCONE_ELLIPTIC;
    m->opt.solver = mjSOL_PGS;
    m->opt.iterations = std::max(m->opt.iterations, kSlipIterations);
    m->opt.tolerance = std::min(m->opt.tolerance, kSlipTolerance);
    spdlog::info("{}: contacts with slip compliance: solved with MuJoCo's elliptic friction cone "
                 "and PGS solver (src/physics/README.md, \"Friction directions and slip\")",
                 r.scoped_name(world_));
    return true;
  }
  static constexpr int kSlipIterations = 400;
  static constexpr double kSlipTolerance = 1e-12;

  // This step's SlipComplianceCmd and ContactFrictionCmd (held while they exist): the geoms
  // commanded last step get their built surface back, then this step's commands apply. A
  // change that alters a contact's directions or coefficients (a geom newly commanded, its
  // friction changed) remakes this step's contacts (kPosChanged); slip applies as it is.
  int apply_surface_commands(ecs::Registry& r) {
    std::vector<mujoco::GeomSurface> before;
    for (int g : surface_cmds_) {
      before.push_back(surfaces_.geoms[g]);
      surfaces_.geoms[g] = surface_base_.geoms[g];
    }
    const std::vector<int> last = std::move(surface_cmds_);
    surface_cmds_.clear();
    auto command = [&](ecs::Entity e, int g) {
      const auto* slip = r.try_get<c::SlipComplianceCmd>(e);
      const auto* friction = r.try_get<c::ContactFrictionCmd>(e);
      if (!slip && !friction) return;
      if (std::find(surface_cmds_.begin(), surface_cmds_.end(), g) != surface_cmds_.end()) return;
      surface_command(r, e, slip, friction, surfaces_.geoms[g]);
      surface_cmds_.push_back(g);
    };
    if (!islanded_) {
      auto each = [&](ecs::Entity e, const char* what) {
        const int g = map_.geom_of[e];
        if (g < 0) throw not_simulated(r, e, what, "a collision");
        command(e, g);
      };
      r.each<c::SlipComplianceCmd>(
          [&](ecs::Entity e, const c::SlipComplianceCmd&) { each(e, "SlipComplianceCmd"); });
      r.each<c::ContactFrictionCmd>(
          [&](ecs::Entity e, const c::ContactFrictionCmd&) { each(e, "ContactFrictionCmd"); });
    } else {  // this island's own geoms (the Physics system checks the rest)
      for (int g = 0; g < static_cast<int>(map_.geom_entity.size()); ++g) {
        if (map_.geom_member[g] >= 0) command(map_.geom_entity[g], g);
      }
    }
    surfaces_.refresh();
    if (surfaces_.any_slip() && solve_for_slip(r, m_.get())) return kPosChanged;
    // Directions and coefficients are made with the contacts: remade when they change.
    auto shape_of = [](const mujoco::GeomSurface& gs) {
      return std::tuple(gs.custom, gs.friction_cmd, gs.mu, gs.mu2);
    };
    for (std::size_t k = 0; k < last.size(); ++k) {
      if (shape_of(before[k]) != shape_of(surfaces_.geoms[last[k]])) return kPosChanged;
    }
    for (int g : surface_cmds_) {
      if (std::find(last.begin(), last.end(), g) == last.end() &&
          shape_of(surfaces_.geoms[g]) != shape_of(surface_base_.geoms[g])) {
        return kPosChanged;
      }
    }
    return 0;
  }

  void mark_static_geoms() {
    geom_static_.assign(m_->ngeom, 0);
    for (int g = 0; g < m_->ngeom; ++g) geom_static_[g] = m_->body_weldid[m_->geom_bodyid[g]] == 0;
  }

  static int name2id(const mjModel* m, int type, const std::string& name) {
    const int id = mj_name2id(m, type, name.c_str());
    KESTREL_DEMAND(id >= 0);
    return id;
  }

  Mapping map(const ecs::Registry& r, const mujoco::MjcfModel& mjcf, const mjModel* m) const {
    Mapping mp;
    for (const auto& mr : mjcf.models) {
      Mdl md;
      md.model = mr.model;
      md.parent = mr.parent_model == ecs::kNullEntity ? -1 : mp.model_of[mr.parent_model];
      md.X_LM = mr.X_LM;
      md.dynamic = mr.dynamic;
      md.X_WM = mujoco::world_pose_of(r, mr.model);
      mp.model_of.set(mr.model, static_cast<int>(mp.models.size()));
      mp.models.push_back(md);
    }
    for (const auto& br : mjcf.bodies) {
      Body b;
      b.link = br.link;
      b.id = name2id(m, mjOBJ_BODY, br.name);
      b.dynamic = br.dynamic;
      b.gravity = br.gravity;
      if (!br.free_joint.empty()) {
        const int j = name2id(m, mjOBJ_JOINT, br.free_joint);
        b.qadr = m->jnt_qposadr[j];
        b.dadr = m->jnt_dofadr[j];
      }
      b.parent_model = mp.model_of[r.parent(br.link)];
      mp.reference[br.link] = br.X_WL;
      if (const auto* fa = r.try_get<c::FluidAddedMass>(br.link); fa && b.dynamic && b.dadr >= 0) {
        mp.added_mass.emplace_back(static_cast<int>(mp.bodies.size()), fa->m);
      }
      mp.body_of.set(br.link, static_cast<int>(mp.bodies.size()));
      mp.bodies.push_back(b);
    }
    for (const auto& wr : mjcf.welds) {
      Weld w;
      w.entity = wr.entity;
      w.eq = name2id(m, mjOBJ_EQUALITY, wr.name);
      w.body1 = m->eq_obj1id[w.eq];
      w.body2 = m->eq_obj2id[w.eq];
      mp.welds.push_back(w);
    }
    for (auto& md : mp.models) {
      if (auto* rec = find_model(mjcf, md.model); rec && rec->canonical != ecs::kNullEntity) {
        md.canonical = mp.bodies[mp.body_of[rec->canonical]].id;
      }
    }
    // Root bodies (free or welded to the world) belong to every model above them.
    for (std::size_t i = 0; i < mp.bodies.size(); ++i) {
      const Body& b = mp.bodies[i];
      if (m->body_parentid[b.id] != 0) continue;
      for (ecs::Entity p = r.parent(b.link); p != ecs::kNullEntity; p = r.parent(p)) {
        if (const int mi = mp.model_of[p]; mi >= 0) mp.models[mi].roots.push_back(int(i));
      }
    }
    for (const auto& jr : mjcf.joints) {
      Jnt j;
      j.joint = jr.joint;
      j.type = jr.type;
      j.naxes = static_cast<int>(jr.names.size());
      j.child_body = mp.bodies[mp.body_of[jr.child]].id;
      j.X_CJ = jr.X_CJ;
      for (int k = 0; k < j.naxes; ++k) {
        const int id = name2id(m, mjOBJ_JOINT, jr.names[k]);
        j.qadr[k] = m->jnt_qposadr[id];
        j.dadr[k] = m->jnt_dofadr[id];
        j.effort[k] = jr.effort[k];
        j.velocity[k] = jr.velocity[k];
        const bool ball = m->jnt_type[id] == mjJNT_BALL;
        j.nq += ball ? 4 : 1;
        j.nv += ball ? 3 : 1;
      }
      mp.reference[jr.joint] = jr.X_WJ;
      mp.joint_of.set(jr.joint, static_cast<int>(mp.joints.size()));
      mp.joints.push_back(j);
    }
    // Which island member each moving geom belongs to (its top-level model).
    mp.geom_member.assign(m->ngeom, -1);
    if (islanded_) {
      std::vector<int> body_member(m->nbody, -1);
      for (const Body& b : mp.bodies) {
        if (!b.dynamic) continue;
        ecs::Entity top = b.link;
        while (r.parent(top) != world_ && r.parent(top) != ecs::kNullEntity) top = r.parent(top);
        const auto it = std::lower_bound(members_.begin(), members_.end(), top);
        if (it != members_.end() && *it == top) body_member[b.id] = int(it - members_.begin());
      }
      for (int g = 0; g < m->ngeom; ++g) {
        if (m->geom_contype[g] == 0 && m->geom_conaffinity[g] == 0) continue;  // collides never
        mp.geom_member[g] = body_member[m->geom_bodyid[g]];
      }
    }
    mp.geom_entity.assign(m->ngeom, ecs::kNullEntity);
    for (ecs::Entity g : mjcf.geoms) {
      const int id = name2id(m, mjOBJ_GEOM, r.scoped_name(g));
      mp.geom_entity[id] = g;
      mp.geom_of.set(g, id);
    }
    mp.jnt_entity.assign(m->njnt, world_);
    for (const Body& b : mp.bodies) {
      if (b.dadr >= 0) mp.jnt_entity[m->dof_jntid[b.dadr]] = b.link;
    }
    for (const Jnt& j : mp.joints) {
      for (int k = 0; k < j.naxes; ++k) mp.jnt_entity[m->dof_jntid[j.dadr[k]]] = j.joint;
    }
    mp.prev_vel.assign(6 * mp.bodies.size(), 0.0);
    for (std::size_t i = 0; i < mp.bodies.size(); ++i) {
      if (!mp.bodies[i].gravity && mp.bodies[i].dynamic) mp.no_gravity.push_back(int(i));
    }
    return mp;
  }

  static const mujoco::ModelRecord* find_model(const mujoco::MjcfModel& mjcf, ecs::Entity e) {
    for (const auto& mr : mjcf.models) {
      if (mr.model == e) return &mr;
    }
    return nullptr;
  }

  template <class T>
  static void ensure(ecs::Registry& r, ecs::Entity e) {
    if (!r.has<T>(e)) r.add<T>(e);
  }

  // A <sensor type="force_torque"> declared in the joint (its reader needs the wrench).
  static bool has_force_torque_sensor(const ecs::Registry& r, ecs::Entity joint) {
    for (ecs::Entity ch : r.children(joint)) {
      if (const auto* s = r.try_get<c::Sensor>(ch); s && s->type == "force_torque") return true;
    }
    return false;
  }

  void add_state_components(ecs::Registry& r) {
    for (const Body& b : map_.bodies) {
      ensure<c::Pose>(r, b.link);
      ensure<c::WorldPose>(r, b.link);
      ensure<c::LinearVelocity>(r, b.link);
      ensure<c::AngularVelocity>(r, b.link);
      ensure<c::WorldLinearVelocity>(r, b.link);
      ensure<c::WorldAngularVelocity>(r, b.link);
      ensure<c::LinearAcceleration>(r, b.link);
      ensure<c::WorldLinearAcceleration>(r, b.link);
      ensure<c::AngularAcceleration>(r, b.link);
      ensure<c::WorldAngularAcceleration>(r, b.link);
    }
    for (const Jnt& j : map_.joints) {
      ensure<c::JointPosition>(r, j.joint);
      ensure<c::JointVelocity>(r, j.joint);
      ensure<c::JointForce>(r, j.joint);
      if (has_force_torque_sensor(r, j.joint)) ensure<c::JointTransmittedWrench>(r, j.joint);
      r.get<c::JointPosition>(j.joint).data.resize(j.nq);
      r.get<c::JointVelocity>(j.joint).data.resize(j.nv);
      r.get<c::JointForce>(j.joint).data.resize(j.nv);
    }
    for (ecs::Entity g : map_.geom_entity) {
      if (g != ecs::kNullEntity) {
        ensure<c::Contacts>(r, g);
        r.get<c::Contacts>(g).points.clear();
      }
    }
    touched_geoms_.clear();
    static_contacts_.clear();
    refs_valid_ = false;
    refresh_refs(r);
  }

  void refresh_refs(ecs::Registry& r) {
    if (refs_valid_ && refs_epoch_ == r.layout_epoch()) return;
    refs_valid_ = true;
    refs_epoch_ = r.layout_epoch();
    body_refs_.clear();
    for (const Body& b : map_.bodies) {
      const ecs::Entity e = b.link;
      body_refs_.push_back(
          {r.try_get<c::WorldPose>(e), r.try_get<c::Pose>(e), r.try_get<c::WorldLinearVelocity>(e),
           r.try_get<c::WorldAngularVelocity>(e), r.try_get<c::LinearVelocity>(e),
           r.try_get<c::AngularVelocity>(e), r.try_get<c::WorldLinearAcceleration>(e),
           r.try_get<c::LinearAcceleration>(e), r.try_get<c::WorldAngularAcceleration>(e),
           r.try_get<c::AngularAcceleration>(e), r.try_get<c::ExternalWorldWrenchCmd>(e)});
    }
    model_refs_.clear();
    for (const Mdl& md : map_.models) {
      model_refs_.push_back({r.try_get<c::WorldPose>(md.model), r.try_get<c::Pose>(md.model)});
    }
    joint_refs_.clear();
    for (const Jnt& j : map_.joints) {
      joint_refs_.push_back(
          {r.try_get<c::JointPosition>(j.joint), r.try_get<c::JointVelocity>(j.joint),
           r.try_get<c::JointForce>(j.joint), r.try_get<c::JointTransmittedWrench>(j.joint),
           r.try_get<c::JointForceCmd>(j.joint), r.try_get<c::JointVelocityCmd>(j.joint)});
    }
  }

  // ---- commands -----------------------------------------------------------------------------

  Error not_simulated(const ecs::Registry& r, ecs::Entity e, const char* what,
                      const char* expected) const {
    return Error(r.describe(e), fmt::format("{} needs {} simulated by Physics", what, expected));
  }

  int apply_commands(ecs::Registry& r) {
    mjModel* m = m_.get();
    mjData* d = d_.get();
    int changed = map_.welds.empty() ? 0 : switch_welds(r);
    clear_wrenches();
    mju_zero(d->qfrc_applied, m->nv);
    // Links with gravity off: cancel gravity at the centre of mass.
    for (int bi : map_.no_gravity) {
      const Body& b = map_.bodies[bi];
      note_wrench(b.id);
      for (int k = 0; k < 3; ++k)
        d->xfrc_applied[6 * b.id + k] -= m->body_mass[b.id] * m->opt.gravity[k];
    }
    auto wrench = [&](ecs::Entity e, c::ExternalWorldWrenchCmd& w) {
      const int bi = map_.body_of[e];
      if (bi < 0 || !map_.bodies[bi].dynamic) {
        throw not_simulated(r, e, "ExternalWorldWrenchCmd", "a moving link");
      }
      const int id = map_.bodies[bi].id;
      // At the link origin in MuJoCo terms: xfrc_applied acts at the centre of mass.
      const Vector3d r_co = v3(d->xpos + 3 * id) - v3(d->xipos + 3 * id);
      const Vector3d tau = w.torque + r_co.Cross(w.force);
      note_wrench(id);
      mjtNum* f = d->xfrc_applied + 6 * id;
      f[0] += w.force.X(), f[1] += w.force.Y(), f[2] += w.force.Z();
      f[3] += tau.X(), f[4] += tau.Y(), f[5] += tau.Z();
      w.force = Vector3d::Zero;
      w.torque = Vector3d::Zero;
    };
    auto joint_force = [&](ecs::Entity e, c::JointForceCmd& cmd) {
      const Jnt& j = joint_for(r, e, cmd.data.size(), "JointForceCmd");
      for (std::size_t k = 0; k < cmd.data.size(); ++k) {
        double f = cmd.data[k];
        if (j.effort[k] >= 0) f = std::clamp(f, -j.effort[k], j.effort[k]);
        d->qfrc_applied[j.dadr[k]] += f;
        cmd.data[k] = 0;
      }
    };
    // A velocity command is a servo, as DART's: a friction-loss row of the dof, bounded by the
    // joint's effort limit, whose reference velocity is the command (servo_reference). Gazebo
    // gives a JointForceCmd precedence: the joint's velocity command is then not applied.
    for (Servo& s : servos_) s.seen = false;
    auto joint_velocity = [&](ecs::Entity e, const c::JointVelocityCmd& cmd) {
      const Jnt& j = joint_for(r, e, cmd.data.size(), "JointVelocityCmd");
      if (r.has<c::JointForceCmd>(e)) {
        // A JointForceCmd stays on its joint (zeroed after each step): say once that the
        // velocity command is dead, rather than let the joint ignore it in silence.
        if (force_wins_.insert(e).second) {
          spdlog::warn("{}: its JointVelocityCmd is not applied: the joint also has a "
                       "JointForceCmd, which takes precedence (as in Gazebo's Physics)",
                       r.describe(e));
        }
        return;
      }
      for (std::size_t k = 0; k < cmd.data.size(); ++k) {
        double v = cmd.data[k];
        if (j.velocity[k] >= 0) v = std::clamp(v, -j.velocity[k], j.velocity[k]);
        changed |= servo(j.dadr[k], j.effort[k], v);
      }
    };
    if (!islanded_) {
      r.each<c::ExternalWorldWrenchCmd>(wrench);
      r.each<c::JointForceCmd>(joint_force);
      r.each<c::JointVelocityCmd>(joint_velocity);
    } else {  // this island's own links and joints (the Physics system checks the rest)
      refresh_refs(r);
      for (std::size_t i = 0; i < map_.bodies.size(); ++i) {
        if (!map_.bodies[i].dynamic) continue;
        if (auto* w = body_refs_[i].wrench_cmd) wrench(map_.bodies[i].link, *w);
      }
      for (std::size_t i = 0; i < map_.joints.size(); ++i) {
        const ecs::Entity e = map_.joints[i].joint;
        if (auto* f = joint_refs_[i].force_cmd) joint_force(e, *f);
        if (auto* v = joint_refs_[i].velocity_cmd) joint_velocity(e, *v);
      }
    }
    changed |= end_servos();
    if (r.count<c::JointPositionReset>() || r.count<c::JointVelocityReset>() ||
        r.count<c::WorldPoseCmd>()) {
      changed |= apply_resets(r);
    }
    if (r.count<c::LinearVelocityCmd>() || r.count<c::AngularVelocityCmd>()) {
      apply_velocity_cmds(r);
      changed |= kVelChanged;
    }
    if (!surface_cmds_.empty() || r.count<c::SlipComplianceCmd>() ||
        r.count<c::ContactFrictionCmd>()) {
      changed |= apply_surface_commands(r);
    }
    return changed;
  }

  // The servo of a dof commanded this step: its friction loss becomes the effort limit (no
  // limit: kUnlimitedServo) with a reference as stiff as MuJoCo allows (two steps, impedance
  // 0.9999: the dof reaches the command within the step where the bound allows). The row is
  // made with the positions (mj_makeConstraint), so a servo that starts or ends counts as a
  // position change. Returns the change flags.
  int servo(int dof, double effort, double velocity) {
    mjModel* m = m_.get();
    if (servo_of_dof_.empty()) servo_of_dof_.assign(m->nv, -1);
    if (const int i = servo_of_dof_[dof]; i >= 0) {
      servos_[i].velocity = velocity;
      servos_[i].seen = true;
      return 0;
    }
    servo_of_dof_[dof] = static_cast<int>(servos_.size());
    Servo s;
    s.dof = dof;
    s.velocity = velocity;
    s.unlimited = !(effort >= 0 && std::isfinite(effort));  // libsdformat: inf without <effort>
    s.seen = true;
    s.frictionloss = m->dof_frictionloss[dof];
    std::copy_n(m->dof_solref + mjNREF * dof, mjNREF, s.solref);
    std::copy_n(m->dof_solimp + mjNIMP * dof, mjNIMP, s.solimp);
    servos_.push_back(s);
    m->dof_frictionloss[dof] = s.unlimited ? kUnlimitedServo : effort;
    mjtNum* ref = m->dof_solref + mjNREF * dof;
    ref[0] = 1e-9;  // time constant: MuJoCo raises it to two time steps (its refsafe)
    ref[1] = 1;     // damping ratio
    mjtNum* imp = m->dof_solimp + mjNIMP * dof;
    imp[0] = imp[1] = 0.9999;  // MuJoCo's largest impedance, the same at any violation
    return kPosChanged;
  }

  // The servos not commanded this step end: their dofs get their own friction loss back.
  int end_servos() {
    mjModel* m = m_.get();
    int changed = 0;
    std::erase_if(servos_, [&](const Servo& s) {
      if (s.seen) return false;
      m->dof_frictionloss[s.dof] = s.frictionloss;
      std::copy_n(s.solref, mjNREF, m->dof_solref + mjNREF * s.dof);
      std::copy_n(s.solimp, mjNIMP, m->dof_solimp + mjNIMP * s.dof);
      servo_of_dof_[s.dof] = -1;
      changed = kPosChanged;
      return true;
    });
    for (std::size_t i = 0; changed && i < servos_.size(); ++i) {
      servo_of_dof_[servos_[i].dof] = static_cast<int>(i);
    }
    return changed;
  }

  // A servo row's reference acceleration drives the dof's velocity to the command: MuJoCo's
  // friction reference −B·v with v measured from the command. Called after the velocity pass
  // and before the constraint solve, every step (the row's velocity is the current one).
  void servo_reference(mjData* d) const {
    for (int i = 0; i < d->nefc; ++i) {
      if (d->efc_type[i] != mjCNSTR_FRICTION_DOF) continue;
      const int k = servo_of_dof_[d->efc_id[i]];
      if (k < 0) continue;
      d->efc_aref[i] = -d->efc_KBIP[4 * i + 1] * (d->efc_vel[i] - servos_[k].velocity);
    }
  }

  // Fluid added mass (components/fluid.h) as gz-sim's DART adds it to a link's spatial
  // inertia: for a free root body, V = (v, ω) its velocity in the link frame (v = Rᵀ·q̇[0:3] at
  // the link origin, ω = q̇[3:6]), the equations gain M_A·V̇ + V ×* (M_A·V) with the body-frame
  // derivative V̇ = T·q̈ + (−ω × v, 0), T = diag(Rᵀ, I). So M += Tᵀ·M_A·T and the bias force
  // += Tᵀ·(M_A·(−ω × v, 0) + (ω × h_v, ω × h_ω + v × h_v)), h = M_A·V; gravity still pulls the
  // link's own mass only (DART applies it as m·g there). Then the factor of M and the
  // constraints' projection are redone. Called after the velocity pass, before the
  // acceleration.
  void add_fluid_mass(const ecs::Registry& r, const mjModel* m, mjData* d) const {
    for (const auto& [bi, A] : map_.added_mass) {
      const Body& b = map_.bodies[static_cast<std::size_t>(bi)];
      const mjtNum* R = d->xmat + 9 * b.id;  // row-major, link axes → world
      const mjtNum* qv = d->qvel + b.dadr;
      double T[6][6] = {};  // V = T·q̇
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) T[i][j] = R[3 * j + i];
        T[3 + i][3 + i] = 1;
      }
      double V[6] = {}, K[6][6] = {}, AT[6][6] = {};
      for (int i = 0; i < 6; ++i) {
        for (int j = 0; j < 6; ++j) V[i] += T[i][j] * qv[j];
      }
      for (int i = 0; i < 6; ++i) {
        for (int j = 0; j < 6; ++j) {
          for (int k = 0; k < 6; ++k) AT[i][j] += A[6 * i + k] * T[k][j];
        }
      }
      for (int i = 0; i < 6; ++i) {
        for (int j = 0; j < 6; ++j) {
          for (int k = 0; k < 6; ++k) K[i][j] += T[k][i] * AT[k][j];
        }
      }
      // Lower triangle of the free joint's 6×6 block: row a holds M(a, a), M(a, a−1), ...
      for (int a = 0; a < 6; ++a) {
        const int adr = m->dof_Madr[b.dadr + a];
        for (int c = a; c >= 0; --c) d->qM[adr + (a - c)] += K[a][c];
      }
      const Vector3d v(V[0], V[1], V[2]), w(V[3], V[4], V[5]);
      const Vector3d jdot = -w.Cross(v);  // body-frame derivative of v at q̈ = 0
      double h[6] = {}, Aj[6] = {};
      for (int i = 0; i < 6; ++i) {
        for (int k = 0; k < 6; ++k) h[i] += A[6 * i + k] * V[k];
        for (int k = 0; k < 3; ++k) Aj[i] += A[6 * i + k] * jdot[k];
      }
      const Vector3d hv(h[0], h[1], h[2]), hw(h[3], h[4], h[5]);
      const Vector3d fl = w.Cross(hv) + Vector3d(Aj[0], Aj[1], Aj[2]);
      const Vector3d fa = w.Cross(hw) + v.Cross(hv) + Vector3d(Aj[3], Aj[4], Aj[5]);
      double bias[6] = {fl.X(), fl.Y(), fl.Z(), fa.X(), fa.Y(), fa.Z()};
      for (int j = 0; j < 6; ++j) {
        double g = 0;
        for (int i = 0; i < 6; ++i) g += T[i][j] * bias[i];
        d->qfrc_bias[b.dadr + j] += g;
      }
    }
    guarded(r, m, d, "a step (the fluid added mass)", phase_refactor);
  }

  // The contacts of a track's collisions (a TrackSurface on their link, written by
  // TrackController): their surface moves, so the friction rows hold the contact's tangential
  // velocity at the surface's instead of at zero — each row's reference acceleration −B·v is
  // taken with v measured from the surface's velocity (components/track.h says how that
  // velocity follows from the contact's point and normal, as gz-sim computes it). Called after
  // the velocity pass (which recomputes efc_aref) and before the constraint solve.
  void track_reference(const ecs::Registry& r, const mjModel* m, mjData* d) const {
    const bool pyramidal = m->opt.cone == mjCONE_PYRAMIDAL;
    for (int i = 0; i < d->ncon; ++i) {
      const mjContact& con = d->contact[i];
      if (con.exclude != 0 || con.efc_address < 0 || con.dim < 3) continue;
      for (int side = 0; side < 2; ++side) {
        const int g = side == 0 ? con.geom1 : con.geom2;
        const auto* parent = r.try_get<c::ParentEntity>(map_.geom_entity[g]);
        const auto* track = parent ? r.try_get<c::TrackSurface>(parent->value) : nullptr;
        const auto* pose = parent ? r.try_get<c::WorldPose>(parent->value) : nullptr;
        if (!track || !pose || track->velocity == 0) continue;
        const Vector3d p = v3(con.pos);
        Vector3d n = v3(con.frame);  // geom1 → geom2; made to point into the track's collision
        if (n.Dot(v3(d->geom_xpos + 3 * g) - p) < 0) n = -n;
        const Vector3d y = (pose->value.Rot() * track->orientation).RotateVector(Vector3d::UnitY);
        Vector3d belt = n.Cross(y);
        if (track->velocity < 0) belt = -belt;
        Vector3d f = belt;
        if (track->center_of_rotation.IsFinite()) {
          f = n.Cross((p - track->center_of_rotation).Normalized());
          if (track->velocity < 0) f = -f;
        }
        const double len = f.Length(), along = belt.Dot(f);
        if (len == 0 || along == 0) continue;
        const Vector3d s = f * ((along > 0 ? 1 : -1) * std::abs(track->velocity) / len);
        // The rows measure geom2's point relative to geom1's.
        const Vector3d dv = side == 0 ? -s : s;
        const double v1 = dv.Dot(v3(con.frame + 3)), v2 = dv.Dot(v3(con.frame + 6));
        auto shift = [d](int row, double by) { d->efc_aref[row] -= d->efc_KBIP[4 * row + 1] * by; };
        const int a = con.efc_address;
        if (pyramidal) {  // rows J_n ± μ_k J_k, k = 1, 2
          shift(a, con.friction[0] * v1);
          shift(a + 1, -con.friction[0] * v1);
          shift(a + 2, con.friction[1] * v2);
          shift(a + 3, -con.friction[1] * v2);
        } else {  // rows J_n, J_1, J_2, …
          shift(a + 1, v1);
          shift(a + 2, v2);
        }
      }
    }
  }

  // The constraint solve of a step whose only rows are unlimited servos (flying multicopters:
  // their rotors), without MuJoCo's Newton iterations over every dof: the rows' forces f of
  // each kinematic tree solve (A + R)·f = aref − J·qacc_smooth, A = J·M⁻¹·Jᵀ over that tree's
  // dofs alone and R the rows' own regularisation, which is the minimiser the solver converges
  // to (no bound is reached). Writes what mj_fwdConstraint writes; false (mj_fwdConstraint then
  // runs and overwrites it) when some other row is there or a force would reach its bound.
  bool solve_servos(const mjModel* m, mjData* d) {
    const int nefc = d->nefc, nv = m->nv;
    if (nefc == 0) return false;  // mj_fwdConstraint's own path
    for (int i = 0; i < nefc; ++i) {
      if (d->efc_type[i] != mjCNSTR_FRICTION_DOF) return false;
      const int k = servo_of_dof_[d->efc_id[i]];
      if (k < 0 || !servos_[k].unlimited) return false;
    }
    if (tree_lo_.empty()) trees(m);
    mju_copy(d->qacc, d->qacc_smooth, nv);
    mju_zero(d->qfrc_constraint, nv);
    // Friction rows are in dof order and a tree's dofs are contiguous: a tree's rows are too.
    for (int i = 0; i < nefc;) {
      const int lo = tree_lo_[d->efc_id[i]], hi = tree_hi_[d->efc_id[i]], n = hi - lo;
      int rows = 1;
      while (i + rows < nefc && tree_lo_[d->efc_id[i + rows]] == lo) ++rows;
      columns_.assign(static_cast<std::size_t>(rows) * n, 0.0);
      schur_.assign(static_cast<std::size_t>(rows) * rows, 0.0);
      rhs_.resize(rows);
      force_.resize(rows);
      for (int a = 0; a < rows; ++a) {  // M⁻¹ of the unit vector of row a's dof, on the tree
        mjtNum* x = columns_.data() + static_cast<std::size_t>(a) * n;
        x[d->efc_id[i + a] - lo] = 1;
        solve_tree(m, d, x, lo, hi);
      }
      for (int a = 0; a < rows; ++a) {
        const int va = d->efc_id[i + a] - lo;
        for (int b = 0; b < rows; ++b) schur_[a * rows + b] = columns_[b * n + va];
        schur_[a * rows + a] += d->efc_R[i + a];
        rhs_[a] = d->efc_aref[i + a] - d->qacc_smooth[d->efc_id[i + a]];
      }
      mju_cholFactor(schur_.data(), rows, mjMINVAL);
      mju_cholSolve(force_.data(), schur_.data(), rhs_.data(), rows);
      for (int a = 0; a < rows; ++a) {
        const mjtNum f = force_[a];
        if (!std::isfinite(f) || std::abs(f) >= d->efc_frictionloss[i + a]) return false;
        const mjtNum* x = columns_.data() + static_cast<std::size_t>(a) * n;
        for (int v = 0; v < n; ++v) d->qacc[lo + v] += f * x[v];
        d->qfrc_constraint[d->efc_id[i + a]] += f;
        d->efc_force[i + a] = f;
        d->efc_state[i + a] = mjCNSTRSTATE_QUADRATIC;
      }
      i += rows;
    }
    mju_copy(d->qacc_warmstart, d->qacc, nv);
    d->solver_iter = 0;
    return true;
  }

  // x ← M⁻¹·x for an x that is zero outside the tree's dofs [lo, hi), on those dofs alone: the
  // passes of MuJoCo's mj_solveLD over its factor (qLD, qLDiagInv; a dof's ancestors are in
  // its tree), with its skip of simple dofs.
  static void solve_tree(const mjModel* m, const mjData* d, mjtNum* x, int lo, int hi) {
    for (int i = hi - 1; i >= lo; --i) {  // x ← L⁻ᵀ·x
      const mjtNum t = x[i - lo];
      if (m->dof_simplenum[i] || t == 0) continue;
      int adr = m->dof_Madr[i] + 1;
      for (int j = m->dof_parentid[i]; j >= 0; j = m->dof_parentid[j]) {
        x[j - lo] -= d->qLD[adr++] * t;
      }
    }
    for (int i = lo; i < hi; ++i) x[i - lo] *= d->qLDiagInv[i];  // x ← D⁻¹·x
    for (int i = lo; i < hi; ++i) {  // x ← L⁻¹·x
      if (m->dof_simplenum[i]) continue;
      int adr = m->dof_Madr[i] + 1;
      for (int j = m->dof_parentid[i]; j >= 0; j = m->dof_parentid[j]) {
        x[i - lo] -= d->qLD[adr++] * x[j - lo];
      }
    }
  }

  // Each dof's kinematic tree as the dof range [tree_lo_, tree_hi_) (a root body's subtree:
  // its bodies, and so their dofs, are contiguous in MuJoCo's order).
  void trees(const mjModel* m) {
    tree_lo_.assign(m->nv, 0);
    tree_hi_.assign(m->nv, 0);
    for (int i = 0; i < m->nv;) {
      const int root = m->body_rootid[m->dof_bodyid[i]];
      int j = i + 1;
      while (j < m->nv && m->body_rootid[m->dof_bodyid[j]] == root) ++j;
      for (int k = i; k < j; ++k) tree_lo_[k] = i, tree_hi_[k] = j;
      i = j;
    }
  }

  // Detachable joints: a weld whose DetachableJoint attached since the last step is switched on
  // with the links' relative pose now (written back as X_PC), one that detached is switched
  // off. MuJoCo makes its constraint rows with the positions (mj_fwdPosition), so a switch
  // counts as a position change: the step redoes them.
  int switch_welds(ecs::Registry& r) {
    mjModel* m = m_.get();
    int changed = 0;
    for (const Weld& w : map_.welds) {
      auto* dj = r.try_get<c::DetachableJoint>(w.entity);
      const bool attach = dj != nullptr && dj->attached && !r.removal_pending(w.entity);
      if (attach == (m->eq_active[w.eq] != 0)) continue;
      if (attach) {
        dj->X_PC = compose(inverse(body_pose(d_.get(), w.body1)), body_pose(d_.get(), w.body2));
        dj->pose_set = true;
        mjtNum* data = m->eq_data + mjNEQDATA * w.eq;  // anchor (3), relpose (3 + 4), torquescale
        const auto& X = dj->X_PC;
        data[3] = X.Pos().X(), data[4] = X.Pos().Y(), data[5] = X.Pos().Z();
        data[6] = X.Rot().W(), data[7] = X.Rot().X(), data[8] = X.Rot().Y();
        data[9] = X.Rot().Z();
      } else if (dj) {
        dj->pose_set = false;
      }
      m->eq_active[w.eq] = attach ? 1 : 0;
      changed |= kPosChanged;
    }
    return changed;
  }

  void note_wrench(int body) {
    if (wrench_noted_.size() != static_cast<std::size_t>(m_->nbody)) {
      wrench_noted_.assign(m_->nbody, 0);
    }
    if (!wrench_noted_[body]) wrench_noted_[body] = 1, wrench_bodies_.push_back(body);
  }
  // A new mjData starts without wrenches.
  void forget_wrenches() {
    wrench_bodies_.clear();
    wrench_noted_.assign(m_->nbody, 0);
  }
  // Zeroes the wrenches left in xfrc_applied.
  void clear_wrenches() {
    for (int id : wrench_bodies_) {
      mju_zero(d_->xfrc_applied + 6 * id, 6);
      wrench_noted_[id] = 0;
    }
    wrench_bodies_.clear();
  }

  // Moves the wrenches in xfrc_applied (at each body's centre of mass) into qfrc_applied as
  // generalized forces J^T [f; τ], visiting only the dofs on the body's own chain to the world.
  // MuJoCo's mj_applyFT builds a dense 3×nv Jacobian for every body with a wrench, which makes
  // a swarm's step quadratic in its size (every rotor has a wrench). With the com-based motion
  // cdof = [ω; v] of each dof (about subtree_com of the body's root) and r the point relative to
  // that com, the dof's generalized force is v·f + ω·(τ + r × f). cdof and subtree_com hold for
  // the current qpos between steps and after the re-kinematics of teleports. qfrc_applied's
  // joint commands are kept apart first (qfrc_joint_): JointForce reports those, not wrenches.
  void wrenches_to_qfrc(bool keep_xfrc) {
    const mjModel* m = m_.get();
    mjData* d = d_.get();
    qfrc_joint_.clear();
    if (wrench_bodies_.empty() || keep_xfrc) return;
    qfrc_joint_.assign(d->qfrc_applied, d->qfrc_applied + m->nv);
    for (int id : wrench_bodies_) {
      mjtNum* x = d->xfrc_applied + 6 * id;
      int body = id;
      while (body > 0 && m->body_dofnum[body] == 0) body = m->body_parentid[body];
      if (body > 0) {
        const Vector3d f(x[0], x[1], x[2]);
        const Vector3d r = v3(d->xipos + 3 * id) - v3(d->subtree_com + 3 * m->body_rootid[id]);
        const Vector3d t = Vector3d(x[3], x[4], x[5]) + r.Cross(f);
        for (int i = m->body_dofadr[body] + m->body_dofnum[body] - 1; i >= 0;
             i = m->dof_parentid[i]) {
          const mjtNum* cd = d->cdof + 6 * i;
          d->qfrc_applied[i] += cd[0] * t.X() + cd[1] * t.Y() + cd[2] * t.Z() + cd[3] * f.X() +
                                cd[4] * f.Y() + cd[5] * f.Z();
        }
      }
    }
    clear_wrenches();
  }

  const Jnt& joint_for(const ecs::Registry& r, ecs::Entity e, std::size_t n, const char* what) {
    const int ji = map_.joint_of[e];
    if (ji < 0) throw not_simulated(r, e, what, "a joint");
    const Jnt& j = map_.joints[ji];
    const bool ball = j.type == c::JointType::kBall;
    if ((!ball && n > static_cast<std::size_t>(j.naxes)) || (ball && n > 0)) {
      throw Error(r.describe(e),
                  fmt::format("{} has {} values; this joint takes at most {}{}", what, n,
                              ball ? 0 : j.naxes, ball ? " (ball joints are not commanded)" : ""));
    }
    return j;
  }

  int apply_resets(ecs::Registry& r) {
    mjData* d = d_.get();
    int changed = 0;
    std::vector<ecs::Entity> done;
    r.each<c::JointPositionReset>([&](ecs::Entity e, const c::JointPositionReset& cmd) {
      const int ji = map_.joint_of[e];
      if (ji < 0 && islanded_) return;  // another island's
      if (ji < 0) throw not_simulated(r, e, "JointPositionReset", "a joint");
      const Jnt& j = map_.joints[ji];
      if (cmd.data.size() != static_cast<std::size_t>(j.nq)) {
        throw Error(r.describe(e), fmt::format("JointPositionReset needs {} values, found {}", j.nq,
                                               cmd.data.size()));
      }
      std::size_t i = 0;
      for (int k = 0; k < j.naxes; ++k) {
        const int nq = m_->jnt_type[jnt_id(j, k)] == mjJNT_BALL ? 4 : 1;
        for (int q = 0; q < nq; ++q) d->qpos[j.qadr[k] + q] = cmd.data[i++];
      }
      done.push_back(e);
      changed |= kPosChanged;
    });
    // Islands: the Physics system removes one-shot commands once every island has seen them.
    if (!islanded_) {
      for (ecs::Entity e : done) r.remove<c::JointPositionReset>(e);
    }
    done.clear();
    r.each<c::JointVelocityReset>([&](ecs::Entity e, const c::JointVelocityReset& cmd) {
      const int ji = map_.joint_of[e];
      if (ji < 0 && islanded_) return;  // another island's
      if (ji < 0) throw not_simulated(r, e, "JointVelocityReset", "a joint");
      const Jnt& j = map_.joints[ji];
      if (cmd.data.size() != static_cast<std::size_t>(j.nv)) {
        throw Error(r.describe(e), fmt::format("JointVelocityReset needs {} values, found {}", j.nv,
                                               cmd.data.size()));
      }
      std::size_t i = 0;
      for (int k = 0; k < j.naxes; ++k) {
        const int nv = m_->jnt_type[jnt_id(j, k)] == mjJNT_BALL ? 3 : 1;
        for (int v = 0; v < nv; ++v) d->qvel[j.dadr[k] + v] = cmd.data[i++];
      }
      done.push_back(e);
      changed |= kVelChanged;
    });
    if (!islanded_) {
      for (ecs::Entity e : done) r.remove<c::JointVelocityReset>(e);
    }
    done.clear();
    r.each<c::WorldPoseCmd>([&](ecs::Entity e, const c::WorldPoseCmd& cmd) {
      if (islanded_ && !owns(e)) return;  // another island's
      teleport(r, e, cmd.value);
      done.push_back(e);
      changed |= kPosChanged;
    });
    if (!islanded_) {
      for (ecs::Entity e : done) r.remove<c::WorldPoseCmd>(e);
    }
    return changed;
  }

  bool owns(ecs::Entity e) const { return map_.model_of[e] >= 0 || map_.body_of[e] >= 0; }

  // Root bodies moved by a command on `e` (a model or a root link) and the frame the command
  // refers to.
  std::vector<int> roots_of(const ecs::Registry& r, ecs::Entity e, const char* what,
                            Pose3d& X_WE) const {
    if (const int mi = map_.model_of[e]; mi >= 0) {
      X_WE = map_.models[mi].X_WM;
      return map_.models[mi].roots;
    }
    if (const int bi = map_.body_of[e]; bi >= 0 && m_->body_parentid[map_.bodies[bi].id] == 0) {
      X_WE = body_pose(d_.get(), map_.bodies[bi].id);
      return {bi};
    }
    throw not_simulated(r, e, what, "a model or a link attached to nothing");
  }

  void teleport(const ecs::Registry& r, ecs::Entity e, const Pose3d& X_WE_new) {
    Pose3d X_WE;
    const std::vector<int> roots = roots_of(r, e, "WorldPoseCmd", X_WE);
    const Pose3d X_EW = inverse(X_WE);
    for (int bi : roots) {
      const Body& b = map_.bodies[bi];
      const Pose3d X_WB = compose(X_WE_new, compose(X_EW, body_pose(d_.get(), b.id)));
      const auto& q = X_WB.Rot();
      if (b.qadr >= 0) {
        mjtNum* qp = d_->qpos + b.qadr;
        qp[0] = X_WB.Pos().X(), qp[1] = X_WB.Pos().Y(), qp[2] = X_WB.Pos().Z();
        qp[3] = q.W(), qp[4] = q.X(), qp[5] = q.Y(), qp[6] = q.Z();
      } else {  // welded to the world: move the body in the model itself
        mjtNum* bp = m_->body_pos + 3 * b.id;
        mjtNum* bq = m_->body_quat + 4 * b.id;
        bp[0] = X_WB.Pos().X(), bp[1] = X_WB.Pos().Y(), bp[2] = X_WB.Pos().Z();
        bq[0] = q.W(), bq[1] = q.X(), bq[2] = q.Y(), bq[3] = q.Z();
        map_.reference[b.link] = X_WB;
      }
    }
    if (const int mi = map_.model_of[e]; mi >= 0) map_.models[mi].X_WM = X_WE_new;
    full_read_ = true;  // static bodies moved: report them once
  }

  void apply_velocity_cmds(ecs::Registry& r) {
    std::unordered_map<ecs::Entity, std::pair<Vector3d, Vector3d>> cmds;  // rare: commands only
    std::vector<ecs::Entity> order;
    r.each<c::LinearVelocityCmd>([&](ecs::Entity e, const c::LinearVelocityCmd& v) {
      if (!cmds.count(e)) order.push_back(e);
      cmds[e].first = v.value;
    });
    r.each<c::AngularVelocityCmd>([&](ecs::Entity e, const c::AngularVelocityCmd& w) {
      if (!cmds.count(e)) order.push_back(e);
      cmds[e].second = w.value;
    });
    for (ecs::Entity e : order) {
      if (islanded_ && !owns(e)) continue;  // another island's
      Pose3d X_WE;
      const std::vector<int> roots = roots_of(r, e, "LinearVelocityCmd/AngularVelocityCmd", X_WE);
      const bool has_lin = r.has<c::LinearVelocityCmd>(e),
                 has_ang = r.has<c::AngularVelocityCmd>(e);
      for (int bi : roots) {
        const Body& b = map_.bodies[bi];
        if (b.dadr < 0) {
          throw Error(r.describe(e), "velocity command on a static model or link");
        }
        mjtNum* qv = d_->qvel + b.dadr;
        const mjtNum* R = d_->xmat + 9 * b.id;
        // Current world angular velocity (qvel's angular part is in the body frame).
        Vector3d w_W = rot(R, Vector3d(qv[3], qv[4], qv[5]));
        if (has_ang) w_W = X_WE.Rot().RotateVector(cmds[e].second);
        if (has_lin) {
          const Vector3d v_E_W = X_WE.Rot().RotateVector(cmds[e].first);
          const Vector3d v_B_W = v_E_W + w_W.Cross(v3(d_->xpos + 3 * b.id) - X_WE.Pos());
          qv[0] = v_B_W.X(), qv[1] = v_B_W.Y(), qv[2] = v_B_W.Z();
        }
        const Vector3d w_B = rot_t(R, w_W);
        qv[3] = w_B.X(), qv[4] = w_B.Y(), qv[5] = w_B.Z();
      }
    }
  }

  // ---- readout --------------------------------------------------------------------------------

  void read_contacts(ecs::Registry& r) {
    const mjData* d = d_.get();
    for (ecs::Entity g : touched_geoms_) {
      if (auto* cs = r.try_get<c::Contacts>(g)) cs->points.clear();
    }
    touched_geoms_.clear();
    static_contacts_.clear();
    for (int i = 0; i < d->ncon; ++i) {
      const mjContact& con = d->contact[i];
      if (con.exclude != 0 || con.efc_address < 0) continue;
      mjtNum f[6];
      mj_contactForce(m_.get(), d, i, f);
      const mjtNum* F = con.frame;  // rows: normal (geom1 → geom2), tangent1, tangent2
      // Force geom1 exerts on geom2, world frame.
      const Vector3d force(F[0] * f[0] + F[3] * f[1] + F[6] * f[2],
                           F[1] * f[0] + F[4] * f[1] + F[7] * f[2],
                           F[2] * f[0] + F[5] * f[1] + F[8] * f[2]);
      const Vector3d n(F[0], F[1], F[2]);
      const ecs::Entity g1 = map_.geom_entity[con.geom1], g2 = map_.geom_entity[con.geom2];
      add_contact(r, g2, g1, con, n, force, geom_static_[con.geom2]);
      add_contact(r, g1, g2, con, -n, -force, geom_static_[con.geom1]);
    }
  }

  void add_contact(ecs::Registry& r, ecs::Entity self, ecs::Entity other, const mjContact& con,
                   const Vector3d& n, const Vector3d& force, bool on_static) {
    // A static geom is in every island: the Physics system clears its contacts and adds every
    // island's (static_contacts).
    if (islanded_ && on_static) {
      static_contacts_.push_back({self, {other, v3(con.pos), n, -con.dist, force}});
      return;
    }
    auto* cs = r.try_get<c::Contacts>(self);
    if (!cs) return;
    if (cs->points.empty()) touched_geoms_.push_back(self);
    cs->points.push_back({other, v3(con.pos), n, -con.dist, force});
  }

  void read_joint_forces(bool wrenches) {
    const mjData* d = d_.get();
    for (std::size_t ji = 0; ji < map_.joints.size(); ++ji) {
      const Jnt& j = map_.joints[ji];
      const JointRefs& refs = joint_refs_[ji];
      if (auto* jf = refs.force) {
        int i = 0;
        for (int k = 0; k < j.naxes; ++k) {
          const int nv = m_->jnt_type[jnt_id(j, k)] == mjJNT_BALL ? 3 : 1;
          for (int v = 0; v < nv; ++v, ++i) {
            const int dof = j.dadr[k] + v;
            const double applied = qfrc_joint_.empty() ? d->qfrc_applied[dof] : qfrc_joint_[dof];
            jf->data[i] = applied + d->qfrc_passive[dof];
          }
        }
      }
      if (!wrenches) continue;
      if (auto* w = refs.wrench) {
        const int b = j.child_body;
        const mjtNum* cf = d->cfrc_int + 6 * b;  // [torque; force] about the subtree CoM
        const Vector3d f(cf[3], cf[4], cf[5]);
        const Vector3d tau_c(cf[0], cf[1], cf[2]);
        const Pose3d X_WJ = compose(body_pose(d, b), j.X_CJ);
        const Vector3d com = v3(d->subtree_com + 3 * m_->body_rootid[b]);
        const Vector3d tau_j = tau_c + (com - X_WJ.Pos()).Cross(f);
        const Quaterniond q_JW = X_WJ.Rot().Inverse();
        w->force = q_JW.RotateVector(f);
        w->torque = q_JW.RotateVector(tau_j);
      }
    }
  }

  void read_state(bool all, double dt) {
    const bool first = dt == 0;
    const mjData* d = d_.get();
    // models first: links' Pose is relative to their model
    for (std::size_t mi = 0; mi < map_.models.size(); ++mi) {
      Mdl& md = map_.models[mi];
      if (md.dynamic && md.canonical >= 0) md.X_WM = compose(body_pose(d, md.canonical), md.X_LM);
      if (all || md.dynamic) {
        md.X_MW = inverse(md.X_WM);  // X_WM only changes here, at build, reset and teleports
        if (auto* wp = model_refs_[mi].world_pose) wp->value = md.X_WM;
        if (auto* p = model_refs_[mi].pose) {
          p->value = md.parent < 0 ? md.X_WM : compose(map_.models[md.parent].X_MW, md.X_WM);
        }
      }
    }
    const double inv_dt = dt > 0 ? 1.0 / dt : 0.0;
    for (std::size_t i = 0; i < map_.bodies.size(); ++i) {
      const Body& b = map_.bodies[i];
      if (!b.dynamic && !all) continue;
      const BodyRefs& refs = body_refs_[i];
      const int id = b.id;
      const Pose3d X_WL = body_pose(d, id);
      const mjtNum* R = d->xmat + 9 * id;
      // cvel: [angular; linear at the root subtree's CoM], world orientation
      const mjtNum* cv = d->cvel + 6 * id;
      const Vector3d w_W(cv[0], cv[1], cv[2]);
      const Vector3d v_W = Vector3d(cv[3], cv[4], cv[5]) +
                           w_W.Cross(X_WL.Pos() - v3(d->subtree_com + 3 * m_->body_rootid[id]));
      double* prev = map_.prev_vel.data() + 6 * i;
      const Vector3d a_W =
          first ? Vector3d::Zero : (v_W - Vector3d(prev[0], prev[1], prev[2])) * inv_dt;
      const Vector3d alpha_W =
          first ? Vector3d::Zero : (w_W - Vector3d(prev[3], prev[4], prev[5])) * inv_dt;
      prev[0] = v_W.X(), prev[1] = v_W.Y(), prev[2] = v_W.Z();
      prev[3] = w_W.X(), prev[4] = w_W.Y(), prev[5] = w_W.Z();

      if (auto* c = refs.world_pose) c->value = X_WL;
      if (b.parent_model >= 0) {
        if (auto* c = refs.pose) c->value = compose(map_.models[b.parent_model].X_MW, X_WL);
      }
      if (auto* c = refs.world_lin_vel) c->value = v_W;
      if (auto* c = refs.world_ang_vel) c->value = w_W;
      if (auto* c = refs.lin_vel) c->value = rot_t(R, v_W);
      if (auto* c = refs.ang_vel) c->value = rot_t(R, w_W);
      if (auto* c = refs.world_lin_acc) c->value = a_W;
      if (auto* c = refs.lin_acc) c->value = rot_t(R, a_W);
      if (auto* c = refs.world_ang_acc) c->value = alpha_W;
      if (auto* c = refs.ang_acc) c->value = rot_t(R, alpha_W);
    }
    for (std::size_t ji = 0; ji < map_.joints.size(); ++ji) {
      const Jnt& j = map_.joints[ji];
      auto* jp = joint_refs_[ji].position;
      auto* jv = joint_refs_[ji].velocity;
      int qi = 0, vi = 0;
      for (int k = 0; k < j.naxes; ++k) {
        const bool ball = m_->jnt_type[jnt_id(j, k)] == mjJNT_BALL;
        for (int q = 0; q < (ball ? 4 : 1); ++q, ++qi) {
          if (jp && qi < static_cast<int>(jp->data.size())) jp->data[qi] = d->qpos[j.qadr[k] + q];
        }
        for (int v = 0; v < (ball ? 3 : 1); ++v, ++vi) {
          if (jv && vi < static_cast<int>(jv->data.size())) jv->data[vi] = d->qvel[j.dadr[k] + v];
        }
      }
    }
  }

  // ---- warnings ---------------------------------------------------------------------------------

  // Any MuJoCo warning (d->warning) as an Error naming the entity; `context` prefixes the
  // message (the Physics system adds the time of a failing step).
  void check_warnings(const ecs::Registry& r, const mjModel* m, mjData* d, const Mapping& mp,
                      const char* context = nullptr) const {
    // The common case in one branch-free pass (VGEOMFULL, a visualisation warning mj_step never
    // raises, is only skipped below).
    int any = 0;
    for (int w = 0; w < mjNWARNING; ++w) any |= d->warning[w].number;
    if (any == 0) return;
    for (int w = 0; w < mjNWARNING; ++w) {
      if (w == mjWARN_VGEOMFULL || d->warning[w].number == 0) continue;
      const int info = d->warning[w].lastinfo;
      ecs::Entity at = world_;
      std::string what;
      auto dof_entity = [&](int dof) {
        return dof >= 0 && dof < m->nv ? mp.jnt_entity[m->dof_jntid[dof]] : world_;
      };
      auto qpos_entity = [&](int q) {
        int best = -1;
        for (int j = 0; j < m->njnt; ++j) {
          if (m->jnt_qposadr[j] <= q) best = j;
        }
        return best >= 0 ? mp.jnt_entity[best] : world_;
      };
      switch (w) {
        case mjWARN_INERTIA:
          what = "(near-)singular inertia matrix: check the masses and inertias";
          break;
        case mjWARN_CONTACTFULL:
          what = fmt::format(
              "contact buffer full ({} contacts, sized from the world's moving "
              "collisions); too many simultaneous contacts",
              m->nconmax);
          break;
        case mjWARN_CNSTRFULL:
          what = fmt::format("constraint buffer full (njmax = {})", m->njmax);
          break;
        case mjWARN_BADQPOS:
          at = qpos_entity(info);
          what = "position became NaN, infinite or huge: the simulation is unstable";
          break;
        case mjWARN_BADQVEL:
          at = dof_entity(info);
          what = "velocity became NaN, infinite or huge: the simulation is unstable";
          break;
        case mjWARN_BADQACC:
          at = dof_entity(info);
          what = "acceleration became NaN, infinite or huge: the simulation is unstable";
          break;
        default:
          what = fmt::format("MuJoCo warning {} (info {})", w, info);
      }
      d->warning[w].number = 0;
      const std::string name = r.alive(at) ? r.scoped_name(at) : r.describe(at);
      throw Error(where_of(r, at), context ? fmt::format("{}: {}: {}", name, context, what)
                                           : fmt::format("{}: {}", name, what));
    }
  }

  Sizes sizes_, sizes0_;       // what d_ (d0_) is sized by
  bool grow_pending_ = false;  // the last step filled a buffer: grow() before the next
  std::vector<mjtNum> wrenches_keep_, qfrc_keep_;
  ModelPtr m_, m0_;
  DataPtr d_, d0_;
  Mapping map_, map0_;
  // Geom surfaces: as built (and at the first build, for reset), and this step's with the
  // surface commands; the geoms commanded in the last step.
  mujoco::ContactSurfaces surfaces_, surface_base_, surfaces0_;
  std::vector<int> surface_cmds_;
  std::string xml_, xml0_;
  std::vector<PhysicsIssue> issues_, issues0_;
  std::vector<ecs::Entity> touched_geoms_;
  std::vector<std::pair<ecs::Entity, c::ContactPoint>> static_contacts_;  // islands only
  std::vector<int> wrench_bodies_;  // bodies whose xfrc_applied is set this step
  std::vector<char> wrench_noted_;  // per body: in wrench_bodies_
  std::vector<mjtNum> qfrc_joint_;  // qfrc_applied's joint commands, when wrenches were added
  std::vector<BodyRefs> body_refs_;
  std::vector<ModelRefs> model_refs_;
  std::vector<JointRefs> joint_refs_;
  std::uint64_t refs_epoch_ = 0;  // Registry::layout_epoch() when the refs were taken
  bool refs_valid_ = false;
  // The boxes the last step left (bounds()): valid for a partition at bounds_dt_ until the
  // island changes.
  std::vector<Aabb> last_bounds_;
  double bounds_dt_ = 0;
  bool bounds_valid_ = false;
  ecs::Entity world_ = ecs::kNullEntity;
  double dt_ = 0;
  bool full_read_ = false;
  bool velocity_pending_ = false;  // the last step ended after mj_step1's first half
  std::vector<Servo> servos_;      // velocity commands in force, in the order they started
  std::vector<int> servo_of_dof_;  // by dof: index into servos_, -1 none (empty: no servo yet)
  std::unordered_set<ecs::Entity> force_wins_;  // joints warned of: a JointForceCmd wins
  std::vector<int> tree_lo_, tree_hi_;  // by dof: its kinematic tree's dofs (empty: not yet)
  std::vector<mjtNum> columns_, schur_, rhs_, force_;  // solve_servos' buffers
  // Physics islands: this engine's top-level model. Commands are then read from this island's
  // own links and joints only, one-shot commands are left for the Physics system to remove once
  // every island has applied them, and contacts on static geoms (shared by every island) are
  // cleared by the Physics system.
  bool islanded_ = false;
  std::vector<ecs::Entity> members_;  // an island's top-level models, sorted
  int extra_contacts_ = 0;            // room beyond the contacts that can occur (tests)
  std::vector<char> geom_static_;     // by MuJoCo geom id: on a body welded to the world
};

}  // namespace

std::unique_ptr<PhysicsEngine> make_mujoco_engine() {
  return std::make_unique<MujocoEngine>(false, std::vector<ecs::Entity>{});
}

std::unique_ptr<PhysicsEngine> make_mujoco_engine_with_room(int extra_contacts) {
  return std::make_unique<MujocoEngine>(false, std::vector<ecs::Entity>{}, extra_contacts);
}

std::unique_ptr<IslandEngine> make_mujoco_island(std::vector<ecs::Entity> models) {
  return std::make_unique<MujocoEngine>(true, std::move(models));
}

}  // namespace kestrel::physics

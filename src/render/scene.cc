// The Embree scene of a world: static geometry placed in the world once, one instance per
// moving link (its visuals or collisions in a child scene), moved by update() each step.

#include "kestrel/render/scene.h"

#include <embree3/rtcore.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "kestrel/components/camera.h"
#include "kestrel/components/model.h"
#include "kestrel/components/world.h"
#include "kestrel/core/error.h"
#include "render/embree.h"
#include "render/shapes.h"

namespace kestrel::render {

using detail::F16;
using detail::I16;
using detail::load16;
using detail::store16;

namespace c = components;
using ignition::math::Pose3d;
using ignition::math::Vector3d;

RTCDevice detail::device() {
  // One device per process; Embree devices are thread-safe.
  static RTCDevice d = [] {
    RTCDevice dev = rtcNewDevice(nullptr);
    if (!dev)
      throw Error("render", "Embree could not create a device (error " +
                                std::to_string(rtcGetDeviceError(nullptr)) + ")");
    rtcSetDeviceErrorFunction(
        dev,
        [](void*, RTCError code, const char* str) {
          spdlog::error("render: Embree error {}: {}", static_cast<int>(code), str ? str : "");
        },
        nullptr);
    return dev;
  }();
  return d;
}

namespace {

Pose3d compose(const Pose3d& X_AB, const Pose3d& X_BC) {
  return Pose3d(X_AB.Pos() + X_AB.Rot().RotateVector(X_BC.Pos()), X_AB.Rot() * X_BC.Rot());
}

// World ancestor of e (kNullEntity when e is not under a world).
ecs::Entity world_of(const ecs::Registry& r, ecs::Entity e) {
  for (; e != ecs::kNullEntity; e = r.parent(e)) {
    if (r.has<c::World>(e)) return e;
  }
  return ecs::kNullEntity;
}

bool is_static(const ecs::Registry& r, ecs::Entity link) {
  for (ecs::Entity p = r.parent(link); p != ecs::kNullEntity; p = r.parent(p)) {
    if (const auto* s = r.try_get<c::Static>(p); s && s->value && r.has<c::Model>(p)) return true;
  }
  return false;
}

// Triangle geometry from `m` with vertices transformed by X; attached to `scene`.
unsigned attach_mesh(RTCScene scene, const detail::TriMesh& m, const Pose3d& X) {
  RTCGeometry g = rtcNewGeometry(detail::device(), RTC_GEOMETRY_TYPE_TRIANGLE);
  const std::size_t nv = m.vertices.size() / 3, nt = m.indices.size() / 3;
  auto* v = static_cast<float*>(rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_VERTEX, 0,
                                                        RTC_FORMAT_FLOAT3, 3 * sizeof(float), nv));
  for (std::size_t i = 0; i < nv; ++i) {
    const Vector3d p =
        X.Pos() + X.Rot().RotateVector(
                      Vector3d(m.vertices[3 * i], m.vertices[3 * i + 1], m.vertices[3 * i + 2]));
    v[3 * i] = static_cast<float>(p.X());
    v[3 * i + 1] = static_cast<float>(p.Y());
    v[3 * i + 2] = static_cast<float>(p.Z());
  }
  auto* idx = static_cast<unsigned*>(rtcSetNewGeometryBuffer(
      g, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3, 3 * sizeof(unsigned), nt));
  for (std::size_t i = 0; i < 3 * nt; ++i) idx[i] = m.indices[i];
  rtcCommitGeometry(g);
  const unsigned id = rtcAttachGeometry(scene, g);
  rtcReleaseGeometry(g);
  return id;
}

void set_transform(RTCGeometry g, const Pose3d& X, float R[9]) {
  const auto M = ignition::math::Matrix3d(X.Rot());
  float xfm[12];  // column major 3x4
  for (int col = 0; col < 3; ++col) {
    for (int row = 0; row < 3; ++row) {
      xfm[col * 3 + row] = static_cast<float>(M(row, col));
      R[row * 3 + col] = static_cast<float>(M(row, col));
    }
  }
  xfm[9] = static_cast<float>(X.Pos().X());
  xfm[10] = static_cast<float>(X.Pos().Y());
  xfm[11] = static_cast<float>(X.Pos().Z());
  rtcSetGeometryTransform(g, 0, RTC_FORMAT_FLOAT3X4_COLUMN_MAJOR, xfm);
  rtcCommitGeometry(g);
}

}  // namespace

struct Scene::Impl {
  struct Instance {
    ecs::Entity link = ecs::kNullEntity;
    RTCScene child = nullptr;
    RTCGeometry geometry = nullptr;
    std::vector<std::uint32_t> objects;  // child geomID → object index
    Pose3d X_WL;
    float R[9] = {};  // rotation of X_WL, row major (normals of instance hits)
  };
  RTCScene top = nullptr;
  std::vector<const Instance*> top_instance;  // top geomID → its instance
  std::vector<Instance> instances;
  std::size_t counted = 0;                // visuals/collisions in the registry at the last build
  std::unordered_set<ecs::Entity> known;  // the ones that build() considered

  void clear() {
    for (auto& i : instances) rtcReleaseScene(i.child);
    instances.clear();
    known.clear();
    top_instance.clear();
    if (top) rtcReleaseScene(top);
    top = nullptr;
  }
  ~Impl() { clear(); }
};

Scene::Scene(const ecs::Registry& r, ecs::Entity world, Source source)
    : world_(world), source_(source), impl_(std::make_unique<Impl>()) {
  if (const auto* s = r.try_get<c::Scene>(world)) {
    ambient_ = s->ambient;
    background_ = s->background;
  }
  build(r);
}

Scene::~Scene() = default;

void Scene::build(const ecs::Registry& r) {
  auto& im = *impl_;
  im.clear();
  objects_.clear();
  findings_.clear();
  im.top = rtcNewScene(detail::device());
  // Robust: watertight (a ray through a shared edge, e.g. a box face's diagonal, hits).
  rtcSetSceneFlags(im.top, RTC_SCENE_FLAG_ROBUST);
  rtcSetSceneBuildQuality(im.top, RTC_BUILD_QUALITY_LOW);    // refit-friendly top level
  std::unordered_map<ecs::Entity, std::size_t> instance_of;  // link → index in im.instances
  const bool visuals = source_ == Source::kVisuals;
  auto add = [&](ecs::Entity e, const c::Geometry& g) {
    if (r.removal_pending(e) || world_of(r, e) != world_) return;
    im.known.insert(e);
    const ecs::Entity link = r.parent(e);
    const auto* X_WL = r.try_get<c::WorldPose>(link);
    if (!X_WL || !r.has<c::Link>(link)) return;
    detail::TriMesh mesh;
    const std::string why = detail::tessellate(g, !visuals, mesh);
    if (!why.empty()) {
      // A mesh file that was not found is the loader's finding already.
      const auto* m = std::get_if<c::MeshShape>(&g.shape);
      if (!m || !m->path.empty()) findings_.push_back({e, why});
      return;
    }
    SceneObject o;
    o.entity = e;
    o.link = link;
    o.model = r.parent(link);
    if (const auto* m = r.try_get<c::Material>(e)) {
      for (int k = 0; k < 3; ++k) {
        o.diffuse[k] = static_cast<float>(m->diffuse[k]);
        o.ambient[k] = static_cast<float>(m->ambient[k]);
      }
    } else if (mesh.has_color) {
      for (int k = 0; k < 3; ++k) o.diffuse[k] = o.ambient[k] = mesh.diffuse[k];
    }
    o.triangles = static_cast<std::uint32_t>(mesh.indices.size() / 3);
    if (const auto* l = r.try_get<c::SemanticLabel>(e)) o.label = l->value;
    if (const auto* t = r.try_get<c::Temperature>(e)) {
      o.heat_source = true;
      o.temperature = t->kelvin;
    }
    const auto* X_LO = r.try_get<c::Pose>(e);
    const Pose3d X = X_LO ? X_LO->value : Pose3d::Zero;
    o.pose = X;
    if (visuals) o.vertices = mesh.vertices;
    const auto index = static_cast<std::uint32_t>(objects_.size());
    objects_.push_back(o);
    // Static links go, in world coordinates, into one instance that never moves (its
    // BVH is built once at full quality; the top level holds instances only).
    const bool fixed = is_static(r, link);
    auto [it, fresh] =
        instance_of.try_emplace(fixed ? ecs::kNullEntity : link, im.instances.size());
    if (fresh) {
      Impl::Instance inst;
      inst.link = link;
      inst.child = rtcNewScene(detail::device());
      rtcSetSceneFlags(inst.child, RTC_SCENE_FLAG_ROBUST);
      rtcSetSceneBuildQuality(inst.child,
                              fixed ? RTC_BUILD_QUALITY_HIGH : RTC_BUILD_QUALITY_MEDIUM);
      im.instances.push_back(std::move(inst));
    }
    auto& inst = im.instances[it->second];
    inst.link = fixed ? ecs::kNullEntity : link;
    const unsigned id = attach_mesh(inst.child, mesh, fixed ? compose(X_WL->value, X) : X);
    inst.objects.resize(id + 1, Hit::kNoObject);
    inst.objects[id] = index;
  };
  if (visuals) {
    r.each<c::Visual, c::Geometry>(
        [&](ecs::Entity e, const c::Visual&, const c::Geometry& g) { add(e, g); });
    im.counted = r.count<c::Visual>();
  } else {
    r.each<c::Collision, c::Geometry>(
        [&](ecs::Entity e, const c::Collision&, const c::Geometry& g) { add(e, g); });
    im.counted = r.count<c::Collision>();
  }
  for (std::size_t i = 0; i < im.instances.size(); ++i) {
    auto& inst = im.instances[i];
    rtcCommitScene(inst.child);
    inst.geometry = rtcNewGeometry(detail::device(), RTC_GEOMETRY_TYPE_INSTANCE);
    rtcSetGeometryInstancedScene(inst.geometry, inst.child);
    inst.X_WL = inst.link == ecs::kNullEntity ? Pose3d::Zero : r.get<c::WorldPose>(inst.link).value;
    set_transform(inst.geometry, inst.X_WL, inst.R);
    const unsigned id = rtcAttachGeometry(im.top, inst.geometry);
    rtcReleaseGeometry(inst.geometry);
    im.top_instance.resize(id + 1, nullptr);
    im.top_instance[id] = &inst;
  }
  rtcCommitScene(im.top);
  if (rtcGetDeviceError(detail::device()) != RTC_ERROR_NONE) {
    throw Error(r.describe(world_), "Embree could not build the scene (see the error above)");
  }
  for (const auto& f : findings_) {
    const auto* at = r.try_get<c::SourceLocation>(f.entity);
    spdlog::warn("{}: [{}] render: this {} is left out of the {} scene: {}",
                 at ? fmt::format("{}:{}", at->file, at->line) : r.describe(f.entity),
                 r.scoped_name(f.entity), visuals ? "visual" : "collision",
                 visuals ? "camera" : "lidar", f.message);
  }
  ++builds_;
  update_lights(r);
}

void Scene::update(const ecs::Registry& r) {
  auto& im = *impl_;
  bool structural = false;
  auto added = [&](ecs::Entity e, const auto&) { structural = structural || !im.known.count(e); };
  auto removed = [&](ecs::Entity e, const auto&) { structural = structural || im.known.count(e); };
  if (source_ == Source::kVisuals) {
    structural = r.count<c::Visual>() != im.counted;
    r.each_new<c::Visual>(added);
    r.each_removed<c::Visual>(removed);
  } else {
    structural = r.count<c::Collision>() != im.counted;
    r.each_new<c::Collision>(added);
    r.each_removed<c::Collision>(removed);
  }
  if (structural) {
    build(r);
    return;
  }
  bool moved = false;
  for (auto& inst : im.instances) {
    if (inst.link == ecs::kNullEntity) continue;  // the static geometry
    const auto* wp = r.try_get<c::WorldPose>(inst.link);
    if (!wp || wp->value == inst.X_WL) continue;
    inst.X_WL = wp->value;
    set_transform(inst.geometry, inst.X_WL, inst.R);
    moved = true;
  }
  if (moved) {
    rtcCommitScene(im.top);
    ++commits_;
  }
  update_lights(r);
}

void Scene::update_lights(const ecs::Registry& r) {
  lights_.clear();
  r.each<c::Light>([&](ecs::Entity e, const c::Light& l) {
    if (world_of(r, e) != world_) return;
    Pose3d X_WE;
    const ecs::Entity p = r.parent(e);
    const auto* X_PE = r.try_get<c::Pose>(e);
    if (const auto* X_WP = r.try_get<c::WorldPose>(p); X_WP && r.has<c::Link>(p)) {
      X_WE = compose(X_WP->value, X_PE ? X_PE->value : Pose3d::Zero);
    } else if (const auto* wp = r.try_get<c::WorldPose>(e)) {
      X_WE = wp->value;
    } else if (X_PE) {
      X_WE = X_PE->value;
    }
    SceneLight s;
    if (l.type == "directional") {
      s.type = SceneLight::Type::kDirectional;
    } else if (l.type == "spot") {
      s.type = SceneLight::Type::kSpot;
    } else if (l.type == "point") {
      s.type = SceneLight::Type::kPoint;
    } else {
      return;
    }
    s.position = X_WE.Pos();
    s.direction = X_WE.Rot().RotateVector(l.direction).Normalized();
    const auto* sh = r.try_get<c::LightShading>(e);
    const c::LightShading shading = sh ? *sh : c::LightShading{};
    s.diffuse = l.diffuse * shading.intensity;
    s.range = l.range;
    s.constant = l.attenuation_constant;
    s.linear = l.attenuation_linear;
    s.quadratic = l.attenuation_quadratic;
    s.spot_inner = shading.spot_inner_angle;
    s.spot_outer = shading.spot_outer_angle;
    s.spot_falloff = shading.spot_falloff;
    lights_.push_back(s);
  });
}

void Scene::intersect(std::size_t n, const float* o, const float* d, const float* tnear,
                      const float* tfar, Hit* hits) const {
  for (std::size_t base = 0; base < n; base += 16) {
    alignas(64) RTCRayHit16 rh;
    alignas(64) int valid[16];
    const std::size_t m = std::min<std::size_t>(16, n - base);
    for (std::size_t k = 0; k < 16; ++k) {
      const std::size_t i = base + std::min(k, m - 1);
      valid[k] = k < m ? -1 : 0;
      rh.ray.org_x[k] = o[3 * i], rh.ray.org_y[k] = o[3 * i + 1], rh.ray.org_z[k] = o[3 * i + 2];
      rh.ray.dir_x[k] = d[3 * i], rh.ray.dir_y[k] = d[3 * i + 1], rh.ray.dir_z[k] = d[3 * i + 2];
      rh.ray.tnear[k] = tnear[i];
      rh.ray.tfar[k] = tfar[i];
      rh.ray.mask[k] = 0xffffffffu;
      rh.ray.flags[k] = 0;
      rh.ray.time[k] = 0;
      rh.ray.id[k] = static_cast<unsigned>(k);
    }
    detail::HitPacket hp;
    detail::trace16(*this, valid, rh, hp, true);
    for (std::size_t k = 0; k < m; ++k) {
      hits[base + k] = Hit{hp.t[k], hp.object[k], hp.nx[k], hp.ny[k], hp.nz[k]};
    }
  }
}

void Scene::intersect_single(std::size_t n, const float* o, const float* d, const float* tnear,
                             const float* tfar, Hit* hits) const {
  RTCIntersectContext ctx;
  rtcInitIntersectContext(&ctx);
  for (std::size_t i = 0; i < n; ++i) {
    RTCRayHit rh;
    rh.ray.org_x = o[3 * i], rh.ray.org_y = o[3 * i + 1], rh.ray.org_z = o[3 * i + 2];
    rh.ray.dir_x = d[3 * i], rh.ray.dir_y = d[3 * i + 1], rh.ray.dir_z = d[3 * i + 2];
    rh.ray.tnear = tnear[i], rh.ray.tfar = tfar[i];
    rh.ray.mask = 0xffffffffu, rh.ray.flags = 0, rh.ray.time = 0, rh.ray.id = 0;
    rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
    rh.hit.instID[0] = RTC_INVALID_GEOMETRY_ID;
    rtcIntersect1(impl_->top, &ctx, &rh);
    hits[i] = Hit{};
    if (rh.hit.geomID == RTC_INVALID_GEOMETRY_ID) continue;
    hits[i].t = rh.ray.tfar;
    hits[i].object = impl_->top_instance[rh.hit.instID[0]]->objects[rh.hit.geomID];
  }
}

// Embree's geometry normal of triangle (v0, v1, v2) points like (v1 - v0) × (v2 - v0), the
// right-hand normal the shapes are wound to point outward with (render/shapes.cc): a ray meets
// a front face when Ng · dir < 0 (RenderScene tests pin it).
KESTREL_SIMD_CLONES void detail::trace16(const Scene& s, const int* valid_in, RTCRayHit16& rh,
                                         HitPacket& out, bool unit_normals) {
  const auto& im = s.impl();
  alignas(64) int valid[16];
  alignas(64) float tfar[16];
  // Lane arrays that are read as vectors (here or by Embree) are written as vectors: a vector
  // load of what scalar stores have just written waits for them (store forwarding fails).
  // Whether a lane is left is tracked as the lanes are written, never by reading `valid` back.
  store16(valid, load16<I16>(valid_in));
  int any = 0;
  for (int k = 0; k < 16; ++k) any |= valid_in[k];
  store16(tfar, load16<F16>(rh.ray.tfar));
  store16(out.t, F16{} + std::numeric_limits<float>::infinity());
  store16(out.object, I16{} + static_cast<std::int32_t>(Hit::kNoObject));
  store16(out.nx, F16{}), store16(out.ny, F16{}), store16(out.nz, F16{});
  RTCIntersectContext ctx;
  rtcInitIntersectContext(&ctx);
  ctx.flags = RTC_INTERSECT_CONTEXT_FLAG_COHERENT;
  // Surfaces are one-sided, as a rasteriser culls back faces: a ray that meets the inside of a
  // surface (a camera within its own housing) goes on through it. A few passes at most.
  for (int pass = 0; pass < 8 && any; ++pass) {
    store16(rh.hit.geomID, I16{} + static_cast<std::int32_t>(RTC_INVALID_GEOMETRY_ID));
    store16(rh.hit.instID[0], I16{} + static_cast<std::int32_t>(RTC_INVALID_GEOMETRY_ID));
    rtcIntersect16(valid, im.top, &ctx, &rh);
    // Most packets hit one geometry of one instance (or nothing): then its object and the
    // instance's rotation are the same for every lane and the packet is done with vectors,
    // reading what Embree wrote as vectors (no scalar store is read back as a vector).
    int first = -1;
    for (int k = 0; k < 16 && first < 0; ++k) {
      if (valid[k] && rh.hit.geomID[k] != RTC_INVALID_GEOMETRY_ID) first = k;
    }
    if (first < 0) break;  // every lane left missed
    const auto g0 = static_cast<std::int32_t>(rh.hit.geomID[first]);
    const auto i0 = static_cast<std::int32_t>(rh.hit.instID[0][first]);
    const I16 geom = load16<I16>(rh.hit.geomID), inst = load16<I16>(rh.hit.instID[0]);
    const I16 hit =
        load16<I16>(valid) & (geom != static_cast<std::int32_t>(RTC_INVALID_GEOMETRY_ID));
    const I16 other = hit & ((geom != g0) | (inst != i0));
    const auto& in0 = *im.top_instance[static_cast<unsigned>(i0)];
    const float* R = in0.R;
    const F16 gx = load16<F16>(rh.hit.Ng_x), gy = load16<F16>(rh.hit.Ng_y);
    const F16 gz = load16<F16>(rh.hit.Ng_z);
    const F16 nx = R[0] * gx + R[1] * gy + R[2] * gz;
    const F16 ny = R[3] * gx + R[4] * gy + R[5] * gz;
    const F16 nz = R[6] * gx + R[7] * gy + R[8] * gz;
    const F16 dot = nx * load16<F16>(rh.ray.dir_x) + ny * load16<F16>(rh.ray.dir_y) +
                    nz * load16<F16>(rh.ray.dir_z);
    const I16 back = hit & (dot >= 0);
    int mixed = 0;
    for (int k = 0; k < 16; ++k) mixed |= other[k] | back[k];
    if (!mixed) {
      const F16 t = load16<F16>(rh.ray.tfar);
      store16(out.nx, hit ? nx : load16<F16>(out.nx));
      store16(out.ny, hit ? ny : load16<F16>(out.ny));
      store16(out.nz, hit ? nz : load16<F16>(out.nz));
      store16(out.t, hit ? t : load16<F16>(out.t));
      const auto object = static_cast<std::int32_t>(in0.objects[static_cast<unsigned>(g0)]);
      store16(out.object, hit ? I16{} + object : load16<I16>(out.object));
      break;  // every lane is done
    }
    any = 0;
    for (int k = 0; k < 16; ++k) {
      if (!valid[k]) continue;
      valid[k] = 0;
      const unsigned geom = rh.hit.geomID[k];
      if (geom == RTC_INVALID_GEOMETRY_ID) continue;
      // Every geometry of the top level is an instance: its normal turns with it.
      const auto& in = *im.top_instance[rh.hit.instID[0][k]];
      const std::uint32_t object = in.objects[geom];
      const float gx = rh.hit.Ng_x[k], gy = rh.hit.Ng_y[k], gz = rh.hit.Ng_z[k];
      const float* R = in.R;
      const float nx = R[0] * gx + R[1] * gy + R[2] * gz;
      const float ny = R[3] * gx + R[4] * gy + R[5] * gz;
      const float nz = R[6] * gx + R[7] * gy + R[8] * gz;
      const float dot = nx * rh.ray.dir_x[k] + ny * rh.ray.dir_y[k] + nz * rh.ray.dir_z[k];
      const float t = rh.ray.tfar[k];
      if (dot >= 0) {  // a back face: continue behind it
        rh.ray.tnear[k] = t * (1 + 1e-6f) + 1e-6f;
        rh.ray.tfar[k] = tfar[k];
        valid[k] = rh.ray.tnear[k] < tfar[k] ? -1 : 0;
        any |= valid[k];
        continue;
      }
      out.nx[k] = nx, out.ny[k] = ny, out.nz[k] = nz;
      out.t[k] = t;
      out.object[k] = object;
    }
  }
  if (!unit_normals) return;
  for (int k = 0; k < 16; ++k) {  // the packet at once; a miss keeps its zero normal
    const float len =
        std::sqrt(out.nx[k] * out.nx[k] + out.ny[k] * out.ny[k] + out.nz[k] * out.nz[k]);
    const float inv = 1.f / (len > 0 ? len : 1.f);
    const float u = len > 0 ? inv : 0.f;
    out.nx[k] *= u, out.ny[k] *= u, out.nz[k] *= u;
  }
}

}  // namespace kestrel::render

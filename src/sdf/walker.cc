#include "walker.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdint>

#include "kestrel/components/camera.h"
#include "kestrel/components/fluid.h"
#include "kestrel/components/joint_mimic.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics_islands.h"
#include "kestrel/components/world.h"
#include "kestrel/core/files.h"
#include "kestrel/core/interrupt.h"
#include "kestrel/fuel/fuel.h"
#include "resource.h"
#include "spec.h"

namespace kestrel::sdf::detail {

namespace c = kestrel::components;
using ignition::math::Pose3d;
using ignition::math::Vector3d;

namespace {

Vector3d rgb(const ignition::math::Color& col) { return {col.R(), col.G(), col.B()}; }

// Largest extent of a shape [m], for the millimetre heuristic (planes are infinite: 0).
double extent(const c::Geometry& g) {
  struct V {
    double operator()(const std::monostate&) const { return 0; }
    double operator()(const c::BoxShape& s) const { return s.size.Max(); }
    double operator()(const c::SphereShape& s) const { return 2 * s.radius; }
    double operator()(const c::CylinderShape& s) const { return std::max(2 * s.radius, s.length); }
    double operator()(const c::CapsuleShape& s) const { return s.length + 2 * s.radius; }
    double operator()(const c::EllipsoidShape& s) const { return 2 * s.radii.Max(); }
    double operator()(const c::PlaneShape&) const { return 0; }
    double operator()(const c::MeshShape&) const { return 0; }
    double operator()(const c::HeightmapShape&) const { return 0; }
  };
  return std::visit(V{}, g.shape);
}

c::Geometry geometry(const ::sdf::Geometry& g) {
  c::Geometry out;
  switch (g.Type()) {
    case ::sdf::GeometryType::BOX:
      out.shape = c::BoxShape{g.BoxShape()->Size()};
      break;
    case ::sdf::GeometryType::SPHERE:
      out.shape = c::SphereShape{g.SphereShape()->Radius()};
      break;
    case ::sdf::GeometryType::CYLINDER:
      out.shape = c::CylinderShape{g.CylinderShape()->Radius(), g.CylinderShape()->Length()};
      break;
    case ::sdf::GeometryType::CAPSULE:
      out.shape = c::CapsuleShape{g.CapsuleShape()->Radius(), g.CapsuleShape()->Length()};
      break;
    case ::sdf::GeometryType::ELLIPSOID:
      out.shape = c::EllipsoidShape{g.EllipsoidShape()->Radii()};
      break;
    case ::sdf::GeometryType::PLANE:
      out.shape = c::PlaneShape{g.PlaneShape()->Normal(), g.PlaneShape()->Size()};
      break;
    case ::sdf::GeometryType::MESH: {
      const auto* m = g.MeshShape();
      out.shape = c::MeshShape{m->Uri(), m->FilePath(), m->Scale(), m->Submesh()};
      break;
    }
    case ::sdf::GeometryType::HEIGHTMAP: {
      const auto* h = g.HeightmapShape();
      out.shape = c::HeightmapShape{h->Uri(), h->FilePath(), h->Size(), h->Position()};
      break;
    }
    default:
      break;
  }
  return out;
}

// Sensor types Kestrel has data handling for (systems may or may not be built yet).
bool known_sensor_type(std::string_view t) {
  static constexpr std::string_view kKnown[] = {"imu",
                                                "magnetometer",
                                                "air_pressure",
                                                "altimeter",
                                                "navsat",
                                                "gps",
                                                "air_speed",
                                                "contact",
                                                "force_torque",
                                                "camera",
                                                "depth_camera",
                                                "depth",
                                                "rgbd_camera",
                                                "rgbd",
                                                "gpu_lidar",
                                                "gpu_ray",
                                                "lidar",
                                                "ray",
                                                "cpu_lidar",
                                                "logical_camera",
                                                "segmentation",
                                                "segmentation_camera",
                                                "boundingbox_camera",
                                                "boundingbox",
                                                "thermal_camera",
                                                "thermal"};
  for (std::string_view k : kKnown) {
    if (t == k) return true;
  }
  return false;
}

c::JointType joint_type(::sdf::JointType t, bool& ok) {
  ok = true;
  switch (t) {
    case ::sdf::JointType::FIXED:
      return c::JointType::kFixed;
    case ::sdf::JointType::REVOLUTE:
      return c::JointType::kRevolute;
    case ::sdf::JointType::CONTINUOUS:
      return c::JointType::kContinuous;
    case ::sdf::JointType::PRISMATIC:
      return c::JointType::kPrismatic;
    case ::sdf::JointType::BALL:
      return c::JointType::kBall;
    case ::sdf::JointType::UNIVERSAL:
      return c::JointType::kUniversal;
    case ::sdf::JointType::SCREW:
      return c::JointType::kScrew;
    case ::sdf::JointType::REVOLUTE2:
      return c::JointType::kRevolute2;
    case ::sdf::JointType::GEARBOX:
      return c::JointType::kGearbox;
    default:
      ok = false;
      return c::JointType::kFixed;
  }
}

c::JointAxisData axis_data(const ::sdf::JointAxis& a, const Vector3d& xyz) {
  c::JointAxisData d;
  d.xyz = xyz;
  d.lower = a.Lower();
  d.upper = a.Upper();
  d.effort = a.Effort();
  d.velocity = a.MaxVelocity();
  d.damping = a.Damping();
  d.friction = a.Friction();
  d.spring_reference = a.SpringReference();
  d.spring_stiffness = a.SpringStiffness();
  return d;
}

}  // namespace

// ---- helpers -------------------------------------------------------------------------------

Walker::Loc Walker::loc(const ::sdf::ElementPtr& e) const {
  if (!e) return {d_.file, 0};
  const std::string& f = e->FilePath();
  // Lines of a converted URDF are those of libsdformat's generated document: none to show.
  if (f == kUrdfSource) return {src_.display(f), 0};
  return {f.empty() || f == kStringSource ? d_.file : src_.display(f), e->LineNumber().value_or(0)};
}

std::shared_ptr<const Element> Walker::original(const ::sdf::ElementPtr& e) const {
  if (!e || !e->LineNumber()) return nullptr;
  std::string name_attr;
  if (e->HasAttribute("name")) name_attr = e->Get<std::string>("name");
  return src_.find(e->FilePath(), *e->LineNumber(), e->GetName(), name_attr,
                   [&e] { return e->ToString(""); });
}

namespace {
// A kestrel::Error's message without its location prefix (findings carry the location).
std::string bare(const Error& err) {
  const std::string w = err.what();
  return !err.where().empty() && w.starts_with(err.where() + ": ")
             ? w.substr(err.where().size() + 2)
             : w;
}
}  // namespace

void Walker::error(const Loc& l, ecs::Entity e, const std::string& message) {
  d_.findings.error(l.file, l.line, e ? reg_.scoped_name(e) : "", message);
}
void Walker::warning(const Loc& l, ecs::Entity e, const std::string& message) {
  d_.findings.warning(l.file, l.line, e ? reg_.scoped_name(e) : "", message);
}

// Mesh and heightmap URIs: libsdformat keeps them as written (FilePath() is the SDF file that
// holds them). They resolve like <include> URIs: model://NAME/..., file://, absolute, relative
// to that SDF file's folder, then the resource path. A collision whose file cannot be found is
// an error (physics would lose the shape); a visual's is a warning (Kestrel never reads them).
void Walker::resolve_shape_file(c::Geometry& g, const ::sdf::ElementPtr& el, ecs::Entity e,
                                bool collision) {
  std::string* uri = nullptr;
  std::string* path = nullptr;
  if (auto* m = std::get_if<c::MeshShape>(&g.shape)) {
    uri = &m->uri, path = &m->path;
  } else if (auto* h = std::get_if<c::HeightmapShape>(&g.shape)) {
    uri = &h->uri, path = &h->path;
  } else {
    return;
  }
  // A world read from text (instanced includes) has no file name on its elements: its own.
  const std::string& holder = path->empty() || *path == kStringSource ? d_.file : *path;
  const std::filesystem::path base = detail::directory_of(holder);
  path->clear();
  std::string why;
  if (uri->empty()) {
    why = "has no <uri>";
  } else {
    const Resolved r = resolve_uri(*uri, base, src_.search(), /*files_only=*/true);
    if (!r.file.empty()) {
      *path = r.file.string();
      return;
    }
    if (r.web) why = "cannot be read: " + fuel::missing_advice(*uri, r.searched);
    // A candidate that exists but is no regular file (a FIFO, a device, a directory, a symlink
    // loop) is named with what it is: "not found" would send the user looking elsewhere.
    for (const auto& p : r.web ? std::vector<std::filesystem::path>{} : r.searched) {
      std::error_code ec;
      const bool there = std::filesystem::exists(std::filesystem::status(p, ec));
      if (!there && ec.value() != ELOOP) continue;
      if (const std::string problem = RegularFile(p, UINT64_MAX).problem(); !problem.empty()) {
        why = "resolves to " + p.string() + ": " + problem;
        break;
      }
    }
    if (why.empty()) {
      why = "was not found (searched ";
      for (std::size_t i = 0; i < r.searched.size(); ++i) {
        why += (i ? ", " : "") + r.searched[i].string();
      }
      why += r.searched.empty() ? "nothing: set KESTREL_RESOURCE_PATH)" : ")";
    }
  }
  const std::string what = "'" + *uri + "' " + why;
  if (collision) {
    error(loc(el), e, "collision file " + what);
  } else {
    warning(loc(el), e, "visual file " + what);
  }
}

void Walker::unsupported(const Element& el, ecs::Entity e, const std::string& why) {
  if (!reported_.insert(el.where() + ":" + el.name()).second) return;
  d_.unsupported.push_back("<" + el.name() + "> (" + el.where() + ")");
  d_.findings.warning(el.file(), el.line(), e ? reg_.scoped_name(e) : "", why);
}

void Walker::unsupported_children(const Element* el, std::initializer_list<std::string_view> ok,
                                  ecs::Entity e) {
  if (!el) return;
  for (const auto& ch : el->children()) {
    bool handled = false;
    for (auto h : ok) handled = handled || ch->name() == h;
    if (handled || misspelt(*el, *ch, e)) continue;
    unsupported(
        *ch, e,
        "unsupported element <" + ch->name() + "> in <" + el->name() + "> is ignored by Kestrel");
  }
}

bool Walker::misspelt(const Element& parent, const Element& el, ecs::Entity e) {
  const std::string meant = misspelling_of(parent.name(), el.name());
  if (meant.empty()) return false;
  if (!reported_.insert(el.where() + ":" + el.name()).second) return true;
  d_.findings.error(el.file(), el.line(), e ? reg_.scoped_name(e) : "",
                    misspelling_message(parent.name(), el.name(), meant));
  return true;
}

ecs::Entity Walker::create(ecs::Entity parent, const std::string& name, const ::sdf::ElementPtr& el,
                           const Pose3d& X_PE, const Pose3d& X_WP) {
  const ecs::Entity e = reg_.create(parent);
  reg_.add<c::Name>(e, name);
  reg_.add<c::Pose>(e, X_PE);
  reg_.add<c::WorldPose>(e, X_WP * X_PE);
  const Loc l = loc(el);
  reg_.add<c::SourceLocation>(e, l.file, l.line);
  return e;
}

Pose3d Walker::resolve(const ::sdf::SemanticPose& sp, const std::string& relative_to,
                       const ::sdf::ElementPtr& el, const std::string& what) {
  Pose3d X;
  const auto errors = sp.Resolve(X, relative_to);
  if (!errors.empty()) {
    error(loc(el), ecs::kNullEntity,
          "cannot resolve the pose of " + what + " relative to '" +
              (relative_to.empty() ? std::string("its parent") : relative_to) +
              "': " + errors.front().Message());
    return sp.RawPose();
  }
  return X;
}

void Walker::plugins(const ::sdf::ElementPtr& el, ecs::Entity entity) {
  if (!el || !el->HasElement("plugin")) return;
  for (auto p = el->FindElement("plugin"); p; p = p->GetNextElement("plugin")) {
    PluginDecl decl;
    decl.entity = entity;
    const Loc l = loc(p);
    decl.file = l.file;
    decl.line = l.line;
    decl.config = original(p);
    if (!decl.config) decl.config = Element::parse(p->ToString(""), l.file, l.line);
    decl.filename = decl.config->attribute("filename").value_or("");
    decl.name = decl.config->attribute("name").value_or("");
    if (decl.filename.empty()) {
      error(l, entity, "<plugin name='" + decl.name + "'> has no filename attribute");
      continue;
    }
    d_.plugins.push_back(std::move(decl));
  }
}

// ---- world ---------------------------------------------------------------------------------

void Walker::world(const ::sdf::World& w, ecs::Entity world) {
  const auto el = w.Element();
  const auto orig = original(el);
  d_.name = w.Name();
  reg_.set<c::World>(world, {});
  reg_.set<c::Name>(world, c::Name{w.Name()});
  reg_.set<c::Pose>(world, {});
  reg_.set<c::WorldPose>(world, {});
  const Loc l = loc(el);
  reg_.set<c::SourceLocation>(world, c::SourceLocation{l.file, l.line});

  // Physics: the default <physics> (or the first), as data.
  if (orig && orig->has("physics")) {
    d_.physics_declared = true;
    const auto* ph = w.PhysicsDefault();
    if (ph) {
      const double step = ph->MaxStepSize();
      if (const auto dt = checked_seconds(step, /*positive=*/true); !dt || step <= 0) {
        error(loc(ph->Element()), world,
              fmt::format("<max_step_size> must be a step size {}, found {} s", seconds_range(true),
                          step));
      } else {
        d_.physics.max_step_size = *dt;
      }
      const double rtf = ph->RealTimeFactor();
      if (!(rtf >= 0) || !std::isfinite(rtf)) {
        error(loc(ph->Element()), world,
              "<real_time_factor> must be >= 0 (0 = as fast as possible), found " +
                  fmt::format("{}", rtf));
      } else {
        d_.physics.real_time_factor = rtf;
      }
      d_.physics.sdf_type = ph->EngineType();
      if (auto phe = original(ph->Element())) {
        unsupported_children(
            phe.get(),
            {"max_step_size", "real_time_factor", "real_time_update_rate", "max_contacts"}, world);
      }
    }
  }
  reg_.set<c::PhysicsParams>(world, d_.physics);
  reg_.set<c::Gravity>(world, c::Gravity{w.Gravity()});
  reg_.set<c::MagneticField>(world, c::MagneticField{w.MagneticField()});
  if (const auto* a = w.Atmosphere()) {
    reg_.set<c::Atmosphere>(
        world, c::Atmosphere{a->Temperature().Kelvin(), a->Pressure(), a->TemperatureGradient()});
  }
  if (const auto* s = w.SphericalCoordinates()) {
    c::SphericalCoordinates sc;
    sc.surface_model =
        s->Surface() == ignition::math::SphericalCoordinates::EARTH_WGS84 ? "EARTH_WGS84" : "OTHER";
    sc.latitude_deg = s->LatitudeReference().Degree();
    sc.longitude_deg = s->LongitudeReference().Degree();
    sc.elevation = s->ElevationReference();
    sc.heading_deg = s->HeadingOffset().Degree();
    // GNSS, the magnetic model and the autopilots' home position all start here.
    const auto we = w.Element();
    const auto se = we && we->HasElement("spherical_coordinates")
                        ? we->GetElement("spherical_coordinates")
                        : we;
    const auto check = [&](const char* tag, double v, double limit) {
      if (std::isfinite(v) && std::abs(v) <= limit) return;
      const auto child = se && se->HasElement(tag) ? se->GetElement(tag) : se;
      error(loc(child), world,
            fmt::format("<spherical_coordinates><{}> must be within ±{} degrees; found {}", tag,
                        limit, v));
    };
    check("latitude_deg", sc.latitude_deg, 90);
    check("longitude_deg", sc.longitude_deg, 180);
    if (!std::isfinite(sc.elevation)) {
      error(loc(se), world, "<spherical_coordinates><elevation> must be finite");
    }
    reg_.set<c::SphericalCoordinates>(world, sc);
  }
  if (const auto* s = w.Scene()) {
    reg_.set<c::Scene>(world,
                       c::Scene{rgb(s->Ambient()), rgb(s->Background()), s->Shadows(), s->Grid()});
  }
  if (orig && orig->has("wind")) reg_.set<c::Wind>(world, c::Wind{w.WindLinearVelocity()});

  // Unsupported world children, and the Kestrel opt-out of default systems.
  if (orig) {
    for (const auto& ch : orig->children()) {
      const std::string& n = ch->name();
      if (n == "kestrel:no_default_systems") {
        d_.default_systems = false;
      } else if (n == "kestrel:physics_islands") {
        // Empty or "true": islands forced on; "false": one model whatever the world's size.
        std::string t = ch->text();
        t.erase(0, t.find_first_not_of(" \t\r\n"));
        t.erase(t.find_last_not_of(" \t\r\n") + 1);
        if (t.empty() || t == "true" || t == "1") {
          reg_.set<c::PhysicsIslands>(world, {true});
        } else if (t == "false" || t == "0") {
          reg_.set<c::PhysicsIslands>(world, {false});
        } else {
          d_.findings.error(ch->file(), ch->line(), reg_.scoped_name(world),
                            "<kestrel:physics_islands> takes true, false or nothing (true), "
                            "found '" +
                                t + "'");
        }
      } else if (n == "gui") {
        unsupported(*ch, world, "<gui> is ignored: Kestrel is headless (GUI plugins do not run)");
      } else if (n == "physics" || n == "gravity" || n == "magnetic_field" || n == "atmosphere" ||
                 n == "spherical_coordinates" || n == "scene" || n == "light" || n == "model" ||
                 n == "include" || n == "frame" || n == "plugin" || n == "wind") {
      } else if (!misspelt(*orig, *ch, world)) {
        unsupported(*ch, world, "unsupported element <" + n + "> in <world> is ignored by Kestrel");
      }
    }
  }
  plugins(el, world);

  const Pose3d X_WW;
  for (uint64_t i = 0; i < w.LightCount(); ++i) light(*w.LightByIndex(i), world, X_WW, "world");
  for (uint64_t i = 0; i < w.FrameCount(); ++i) {
    const auto& f = *w.FrameByIndex(i);
    const Pose3d X = resolve(f.SemanticPose(), "world", f.Element(), "frame '" + f.Name() + "'");
    reg_.add<c::Frame>(create(world, f.Name(), f.Element(), X, X_WW));
    ++d_.counts.frames;
  }
  for (uint64_t i = 0; i < w.ModelCount(); ++i) {
    throw_if_interrupted("loading " + d_.file);
    const auto& m = *w.ModelByIndex(i);
    const Pose3d X_WM = resolve(m.SemanticPose(), "world", m.Element(), "model '" + m.Name() + "'");
    model(m, world, X_WW, X_WM, m.Name(), false);
  }
}

// ---- models, links, joints ---------------------------------------------------------------------

ecs::Entity Walker::model(const ::sdf::Model& m, ecs::Entity parent, const Pose3d& X_WP,
                          const Pose3d& X_PM, const std::string& name, bool parent_static) {
  const auto el = m.Element();
  const ecs::Entity e = create(parent, name, el, X_PM, X_WP);
  ++d_.counts.models;
  const bool is_static = parent_static || m.Static();
  reg_.add<c::Model>(e);
  reg_.add<c::Static>(e, is_static);
  reg_.add<c::SelfCollide>(e, m.SelfCollide());
  const auto orig = original(el);
  unsupported_children(orig.get(),
                       {"static", "self_collide", "allow_auto_disable", "enable_wind", "pose",
                        "link", "joint", "frame", "model", "include", "plugin"},
                       e);
  const Pose3d X_WM = X_WP * X_PM;

  for (uint64_t i = 0; i < m.LinkCount(); ++i)
    link(*m.LinkByIndex(i), e, X_WM, is_static, m.EnableWind());
  resolve_friction_frames(e);
  for (uint64_t i = 0; i < m.FrameCount(); ++i) {
    const auto& f = *m.FrameByIndex(i);
    const Pose3d X =
        resolve(f.SemanticPose(), "__model__", f.Element(), "frame '" + f.Name() + "'");
    reg_.add<c::Frame>(create(e, f.Name(), f.Element(), X, X_WM));
    ++d_.counts.frames;
  }
  for (uint64_t i = 0; i < m.ModelCount(); ++i) {
    const auto& n = *m.ModelByIndex(i);
    const Pose3d X_MN =
        resolve(n.SemanticPose(), "__model__", n.Element(), "model '" + n.Name() + "'");
    model(n, e, X_WM, X_MN, n.Name(), is_static);
  }
  // Joints after links and nested models, so parent/child resolve to entities.
  for (uint64_t i = 0; i < m.JointCount(); ++i) joint(*m.JointByIndex(i), e, X_WM);
  resolve_mimics(e);
  if (m.LinkCount() == 0 && m.ModelCount() == 0) {
    error(loc(el), e, "model '" + name + "' has no links");
  }
  plugins(el, e);
  return e;
}

void Walker::link(const ::sdf::Link& l, ecs::Entity model, const Pose3d& X_WM, bool is_static,
                  bool model_wind) {
  const auto el = l.Element();
  const Pose3d X_ML = resolve(l.SemanticPose(), "__model__", el, "link '" + l.Name() + "'");
  const ecs::Entity e = create(model, l.Name(), el, X_ML, X_WM);
  ++d_.counts.links;
  const Pose3d X_WL = X_WM * X_ML;
  reg_.add<c::Link>(e);
  const auto orig = original(el);
  unsupported_children(orig.get(),
                       {"pose", "inertial", "collision", "visual", "sensor", "light", "gravity",
                        "kinematic", "enable_wind", "self_collide"},
                       e);
  bool gravity = true, kinematic = false, self_collide = false;
  try {
    if (orig) {
      gravity = orig->get_or<bool>("gravity", true);
      kinematic = orig->get_or<bool>("kinematic", false);
      self_collide = orig->get_or<bool>("self_collide", false);
    }
  } catch (const Error& err) {
    error(loc(el), e, bare(err));
  }
  reg_.add<c::LinkGravity>(e, gravity);
  reg_.add<c::Kinematic>(e, kinematic);
  if (self_collide) reg_.add<c::SelfCollide>(e, true);  // link-level override of the model's
  reg_.add<c::EnableWind>(e, l.EnableWind() || model_wind);
  check_inertial(orig.get(), l, e, is_static);

  for (uint64_t i = 0; i < l.CollisionCount(); ++i) {
    const auto& col = *l.CollisionByIndex(i);
    const Pose3d X =
        resolve(col.SemanticPose(), l.Name(), col.Element(), "collision '" + col.Name() + "'");
    const ecs::Entity ce = create(e, col.Name(), col.Element(), X, X_WL);
    ++d_.counts.collisions;
    reg_.add<c::Collision>(ce);
    c::Geometry g = col.Geom() ? geometry(*col.Geom()) : c::Geometry{};
    resolve_shape_file(g, col.Element(), ce, /*collision=*/true);
    const auto co = original(col.Element());
    if (std::holds_alternative<std::monostate>(g.shape)) {
      warning(loc(col.Element()), ce,
              "collision has no supported geometry (box, sphere, cylinder, capsule, ellipsoid, "
              "plane, mesh, heightmap); physics ignores it");
    } else if (!is_static && extent(g) > 100) {
      warning(loc(col.Element()), ce,
              "collision is " + fmt::format("{}", extent(g)) +
                  " m across on a moving model: were the sizes written in millimetres?");
    }
    reg_.add<c::Geometry>(ce, g);
    c::Surface s;
    try {
      if (co) {
        unsupported_children(co.get(),
                             {"pose", "geometry", "surface", "laser_retro", "max_contacts"}, ce);
        if (const Element* su = co->child("surface")) {
          unsupported_children(su, {"friction", "bounce", "contact"}, ce);
          if (const Element* fr = su->child("friction")) {
            unsupported_children(fr, {"ode", "torsional"}, ce);
            if (const Element* ode = fr->child("ode")) {
              s.mu = ode->get_or<double>("mu", 1.0);
              s.mu2 = ode->get_or<double>("mu2", s.mu);
              s.slip1 = ode->get_or<double>("slip1", 0.0);
              s.slip2 = ode->get_or<double>("slip2", 0.0);
              if (!(s.slip1 >= 0) || !(s.slip2 >= 0) || !std::isfinite(s.slip1) ||
                  !std::isfinite(s.slip2)) {
                error({ode->file(), ode->line()}, ce,
                      fmt::format("<slip1> {} and <slip2> {}: slip compliances are finite "
                                  "and >= 0 [m/s/N]",
                                  s.slip1, s.slip2));
              }
              if (const Element* f = ode->child("fdir1")) {
                friction_direction(*f, ce, s);
              }
              unsupported_children(ode, {"mu", "mu2", "slip1", "slip2", "fdir1"}, ce);
            }
            if (const Element* t = fr->child("torsional")) {
              s.mu_torsional = t->get_or<double>("coefficient", 0.0);
              s.patch_radius = t->get_or<double>("patch_radius", 0.0);
              unsupported_children(t, {"coefficient", "patch_radius"}, ce);
            }
          }
          if (const Element* b = su->child("bounce")) {
            s.restitution = b->get_or<double>("restitution_coefficient", 0.0);
            unsupported_children(b, {"restitution_coefficient"}, ce);
          }
          if (const Element* ct = su->child("contact")) {
            s.collide_bitmask =
                static_cast<std::uint32_t>(col.Surface() && col.Surface()->Contact()
                                               ? col.Surface()->Contact()->CollideBitmask()
                                               : 0xffff);
            ct->child("collide_bitmask");
            if (const Element* ode = ct->child("ode")) {
              if (ode->has("kp")) s.kp = ode->get<double>("kp");
              if (ode->has("kd")) s.kd = ode->get<double>("kd");
              unsupported_children(ode, {"kp", "kd"}, ce);
            }
            unsupported_children(ct, {"collide_bitmask", "ode"}, ce);
          }
        }
      }
    } catch (const Error& err) {
      error(loc(col.Element()), ce, bare(err));
    }
    reg_.add<c::Surface>(ce, s);
  }
  for (uint64_t i = 0; i < l.VisualCount(); ++i) {
    const auto& v = *l.VisualByIndex(i);
    const Pose3d X = resolve(v.SemanticPose(), l.Name(), v.Element(), "visual '" + v.Name() + "'");
    const ecs::Entity ve = create(e, v.Name(), v.Element(), X, X_WL);
    ++d_.counts.visuals;
    reg_.add<c::Visual>(ve);
    c::Geometry vg = v.Geom() ? geometry(*v.Geom()) : c::Geometry{};
    resolve_shape_file(vg, v.Element(), ve, /*collision=*/false);
    reg_.add<c::Geometry>(ve, std::move(vg));
    if (const auto* mat = v.Material()) {
      reg_.add<c::Material>(ve, c::Material{rgb(mat->Ambient()), rgb(mat->Diffuse()),
                                            rgb(mat->Specular()), v.Transparency()});
    }
    plugins(v.Element(), ve);  // the Label system is declared in a <visual>
  }
  for (uint64_t i = 0; i < l.SensorCount(); ++i) sensor(*l.SensorByIndex(i), e, X_WL, l.Name());
  for (uint64_t i = 0; i < l.LightCount(); ++i) light(*l.LightByIndex(i), e, X_WL, l.Name());
}

// <fdir1> in the collision's frame, or in a link's (gz:expressed_in, Gazebo's and
// ignition's spelling; gz-physics' DART reads it so): a unit vector, zero meaning unset.
void Walker::friction_direction(const Element& f, ecs::Entity collision, c::Surface& s) {
  f.reject_unknown_attributes({"gz:expressed_in", "ignition:expressed_in"});
  const Vector3d dir = f.value<Vector3d>();
  if (!dir.IsFinite()) {
    error({f.file(), f.line()}, collision, "<fdir1> is not a finite vector");
    return;
  }
  if (dir != Vector3d::Zero) s.fdir1 = dir.Normalized();
  auto frame = f.attribute("gz:expressed_in");
  if (!frame) frame = f.attribute("ignition:expressed_in");
  if (frame) friction_frames_.push_back({collision, *frame, {f.file(), f.line()}});
}

void Walker::resolve_friction_frames(ecs::Entity model) {
  std::vector<PendingFrictionFrame> rest;
  for (auto& p : friction_frames_) {
    const ecs::Entity link = reg_.parent(p.collision);
    if (reg_.parent(link) != model) {
      rest.push_back(std::move(p));
      continue;
    }
    const ecs::Entity frame = reg_.child_by_name(model, p.link);
    if (frame == ecs::kNullEntity || !reg_.has<c::Link>(frame)) {
      std::string links;
      for (ecs::Entity ch : reg_.children(model)) {
        if (reg_.has<c::Link>(ch)) links += (links.empty() ? "" : ", ") + reg_.get<c::Name>(ch).value;
      }
      error(p.where, p.collision,
            "<fdir1 expressed_in='" + p.link + "'>: no link '" + p.link + "' in model '" +
                reg_.scoped_name(model) + "' (links: " + links + ")");
      continue;
    }
    reg_.get<c::Surface>(p.collision).fdir1_link = frame;
  }
  friction_frames_ = std::move(rest);
}

void Walker::check_inertial(const Element* link, const ::sdf::Link& l, ecs::Entity e,
                            bool is_static) {
  const Loc where = loc(l.Element());
  const Element* in = link ? link->child("inertial") : nullptr;
  // A link converted from URDF has no SDF text: its mass is the URDF's (massless links were
  // reported from the URDF itself, src/sdf/urdf.cc).
  const bool from_urdf = !link && l.Element() && l.Element()->FilePath() == kUrdfSource;
  c::Inertial inertial{l.Inertial(), in != nullptr || from_urdf};
  reg_.add<c::Inertial>(e, inertial);
  if (is_static || from_urdf) return;  // static links never move: their mass is not used
  if (!in) {
    warning(where, e,
            "link '" + l.Name() +
                "' has no <inertial>: Kestrel uses SDF's default of 1 kg and "
                "unit inertia [kg·m²], which is rarely right; write its <mass> and <inertia> (or "
                "make the model <static>)");
    return;
  }
  unsupported_children(in, {"mass", "pose", "inertia", "fluid_added_mass"}, e);
  const Loc il{where.file, in->line()};
  if (const Element* fa = in->child("fluid_added_mass")) fluid_added_mass(*fa, l, e, where);
  try {
    const double mass = in->get_or<double>("mass", 1.0);
    if (!in->has("mass")) {
      warning(il, e,
              "<inertial> of link '" + l.Name() +
                  "' has no <mass>: Kestrel uses SDF's "
                  "default of 1 kg; write it");
    } else if (!std::isfinite(mass) || mass <= 0) {
      error(il, e,
            "link '" + l.Name() + "' has mass " + fmt::format("{}", mass) +
                " kg; expected a finite mass > 0");
    } else if (mass > 1e5) {
      warning(il, e,
              "link '" + l.Name() + "' has mass " + fmt::format("{}", mass) +
                  " kg: implausible for a moving link (grams instead of kg?)");
    }
    const Element* I = in->child("inertia");
    if (!I) {
      warning(il, e,
              "<inertial> of link '" + l.Name() +
                  "' has no <inertia>: Kestrel uses "
                  "SDF's default of unit inertia (1 kg·m² about each axis); write it");
      return;
    }
    unsupported_children(I, {"ixx", "iyy", "izz", "ixy", "ixz", "iyz"}, e);
    const double ixx = I->get_or<double>("ixx", 1), iyy = I->get_or<double>("iyy", 1),
                 izz = I->get_or<double>("izz", 1), ixy = I->get_or<double>("ixy", 0),
                 ixz = I->get_or<double>("ixz", 0), iyz = I->get_or<double>("iyz", 0);
    const Loc Il{where.file, I->line()};
    for (auto [n, v] : {std::pair{"ixx", ixx},
                        {"iyy", iyy},
                        {"izz", izz},
                        {"ixy", ixy},
                        {"ixz", ixz},
                        {"iyz", iyz}}) {
      if (!std::isfinite(v)) {
        error(Il, e,
              std::string("inertia ") + n + " of link '" + l.Name() + "' is " +
                  fmt::format("{}", v) + "; expected a finite value [kg·m²]");
        return;
      }
    }
    ignition::math::Matrix3d M(ixx, ixy, ixz, ixy, iyy, iyz, ixz, iyz, izz);
    ignition::math::MassMatrix3d mm(std::isfinite(mass) && mass > 0 ? mass : 1, {ixx, iyy, izz},
                                    {ixy, ixz, iyz});
    const Vector3d p = mm.PrincipalMoments();
    const double scale = std::max({std::abs(p.X()), std::abs(p.Y()), std::abs(p.Z()), 1e-300});
    if (p.Min() <= 0) {
      error(Il, e,
            "inertia of link '" + l.Name() +
                "' is not positive definite (principal "
                "moments " +
                fmt::format("{}", p.X()) + ", " + fmt::format("{}", p.Y()) + ", " +
                fmt::format("{}", p.Z()) + " kg·m²); every principal moment must be > 0");
    } else {
      const double tol = 1e-6 * scale;
      if (p.X() + p.Y() < p.Z() - tol || p.Y() + p.Z() < p.X() - tol ||
          p.X() + p.Z() < p.Y() - tol) {
        error(Il, e,
              "inertia of link '" + l.Name() +
                  "' violates the triangle inequality "
                  "(principal moments " +
                  fmt::format("{}", p.X()) + ", " + fmt::format("{}", p.Y()) + ", " +
                  fmt::format("{}", p.Z()) + " kg·m²): no physical body has it");
      }
    }
    (void)M;
  } catch (const Error& err) {
    error(il, e, bare(err));
  }
}

// SDF 1.10's <fluid_added_mass> (newer than libsdformat 12, read from the original text): the
// upper triangle of the 6×6 matrix, each entry 0 when absent, as the specification says.
void Walker::fluid_added_mass(const Element& fa, const ::sdf::Link& l, ecs::Entity e,
                              const Loc& where) {
  static constexpr std::string_view kAxes = "xyzpqr";
  std::vector<std::string> names;
  for (int i = 0; i < 6; ++i) {
    for (int j = i; j < 6; ++j) names.push_back({kAxes[i], kAxes[j]});
  }
  for (const auto& child : fa.children()) {
    if (std::find(names.begin(), names.end(), child->name()) == names.end()) {
      error(Loc{where.file, child->line()}, e,
            "<fluid_added_mass> of link '" + l.Name() + "' has no entry <" + child->name() +
                ">; expected the upper triangle xx, xy, xz, xp, xq, xr, yy, ..., rr");
    }
  }
  c::FluidAddedMass added;
  std::size_t k = 0;
  for (int i = 0; i < 6; ++i) {
    for (int j = i; j < 6; ++j, ++k) {
      const Element* entry = fa.child(names[k]);
      if (!entry) continue;
      double v = 0;
      try {
        v = entry->value<double>();  // a finite number, or an Error saying what was found
      } catch (const Error& err) {
        error(Loc{where.file, entry->line()}, e, bare(err));
        return;
      }
      added.m[6 * i + j] = added.m[6 * j + i] = v;
    }
  }
  reg_.add<c::FluidAddedMass>(e, added);
}

void Walker::joint(const ::sdf::Joint& j, ecs::Entity model, const Pose3d& X_WM) {
  const auto el = j.Element();
  // A parent or child link that does not exist is reported below, by name; the joint's frame
  // and axes, which hang off those links, then cannot resolve and are not reported again.
  std::string scratch;
  const bool links_exist = j.ResolveChildLink(scratch).empty() &&
                           (j.ParentLinkName() == "world" || j.ResolveParentLink(scratch).empty());
  const Pose3d X_MJ = links_exist
                          ? resolve(j.SemanticPose(), "__model__", el, "joint '" + j.Name() + "'")
                          : j.RawPose();
  const ecs::Entity e = create(model, j.Name(), el, X_MJ, X_WM);
  ++d_.counts.joints;
  reg_.add<c::Joint>(e);
  const auto orig = original(el);
  unsupported_children(orig.get(),
                       {"parent", "child", "pose", "axis", "axis2", "thread_pitch", "sensor"}, e);
  c::JointData data;
  bool ok = true;
  data.type = joint_type(j.Type(), ok);
  if (!ok) error(loc(el), e, "joint '" + j.Name() + "' has an invalid type");
  data.parent_name = j.ParentLinkName();
  data.child_name = j.ChildLinkName();
  // Resolve names (possibly scoped "nested::link", or frames attached to links) to entities.
  auto find = [&](const std::string& written, bool child) -> ecs::Entity {
    std::string link = written;
    if (written != "world") {
      std::string resolved;
      if ((child ? j.ResolveChildLink(resolved) : j.ResolveParentLink(resolved)).empty()) {
        link = resolved;
      }
    }
    if (link == "world") return ecs::kNullEntity;
    ecs::Entity at = model;
    std::size_t start = 0;
    while (at != ecs::kNullEntity) {
      const auto sep = link.find("::", start);
      at = reg_.child_by_name(at, link.substr(start, sep == std::string::npos ? sep : sep - start));
      if (sep == std::string::npos) break;
      start = sep + 2;
    }
    if (at == ecs::kNullEntity || !reg_.has<c::Link>(at)) {
      error(loc(el), e,
            "joint '" + j.Name() + "': " + (child ? "child" : "parent") + " link '" + written +
                "' does not exist in model '" + reg_.get<c::Name>(model).value + "'");
      return ecs::kNullEntity;
    }
    return at;
  };
  data.parent = find(data.parent_name, false);
  data.child = find(data.child_name, true);
  if (data.child_name == "world") {
    error(loc(el), e, "joint '" + j.Name() + "': the child cannot be the world");
  }
  for (unsigned k = 0; k < 2; ++k) {
    const auto* a = j.Axis(k);
    if (!a) continue;
    Vector3d xyz = a->Xyz();
    const auto ae = a->Element();
    const auto xyz_el = ae && ae->HasElement("xyz") ? ae->GetElement("xyz") : ae;
    if (xyz_el && xyz_el->GetValue() && xyz_el->Get<Vector3d>() == Vector3d::Zero) {
      error(loc(xyz_el), e,
            "joint '" + j.Name() + "': <" + (k == 0 ? "axis" : "axis2") +
                "><xyz> is 0 0 0; expected a non-zero direction");
      continue;
    }
    const auto errs = a->ResolveXyz(xyz, j.Name());
    if (!errs.empty() && links_exist) {
      error(loc(el), e, "cannot resolve joint axis: " + errs.front().Message());
    }
    if (k == 0) {
      data.axis = axis_data(*a, xyz.Normalized());
    } else {
      data.axis2 = axis_data(*a, xyz.Normalized());
    }
  }
  data.thread_pitch = j.ThreadPitch();
  reg_.add<c::JointData>(e, data);
  for (unsigned k = 0; k < 2; ++k) read_mimic(orig.get(), k, e);
  const Pose3d X_WJ = X_WM * X_MJ;
  // libsdformat 12 gives joint sensors no pose graph of their own: "" = the joint frame.
  for (uint64_t i = 0; i < j.SensorCount(); ++i) sensor(*j.SensorByIndex(i), e, X_WJ, "");
}

// ---- mimic constraints ---------------------------------------------------------------------

namespace {
// Joint types whose axes MuJoCo represents as hinge or slide joints.
bool can_mimic(c::JointType t) {
  return t == c::JointType::kRevolute || t == c::JointType::kContinuous ||
         t == c::JointType::kPrismatic || t == c::JointType::kUniversal ||
         t == c::JointType::kRevolute2;
}
}  // namespace

void Walker::read_mimic(const Element* joint_xml, unsigned k, ecs::Entity joint) {
  if (!joint_xml) return;
  const char* axis_name = k == 0 ? "axis" : "axis2";
  for (const auto& axis : joint_xml->children()) {
    if (axis->name() != axis_name) continue;
    for (const auto& m : axis->children()) {
      if (m->name() != "mimic") continue;
      // libsdformat 12 reports <mimic> as an unknown element: it is handled here.
      reported_.insert(m->where() + ":mimic");
      for (const auto& ch : m->children()) reported_.insert(ch->where() + ":" + ch->name());
      const Loc l{m->file(), m->line()};
      auto& jd = reg_.get<c::JointData>(joint);
      if (!can_mimic(jd.type) || (k == 1 && !jd.axis2)) {
        error(l, joint,
              "<mimic>: only the axes of revolute, continuous, prismatic, universal "
              "and revolute2 joints can follow another joint");
        continue;
      }
      c::JointMimic mimic;
      mimic.axis = k;
      bool ok = true;
      for (const auto& a : m->attribute_names()) {
        if (a == "joint" || a == "axis") continue;
        error(l, joint, "<mimic> has no attribute '" + a + "' (it has joint, axis)");
        ok = false;
      }
      for (const auto& ch : m->children()) {
        const std::string& n = ch->name();
        const Loc cl{ch->file(), ch->line()};
        double* value = n == "multiplier"  ? &mimic.multiplier
                        : n == "offset"    ? &mimic.offset
                        : n == "reference" ? &mimic.reference
                                           : nullptr;
        if (!value) {
          error(cl, joint,
                "<" + n +
                    "> is not an element of <mimic> (it has <multiplier>, "
                    "<offset>, <reference>)");
          ok = false;
          continue;
        }
        try {
          *value = ch->value<double>();
        } catch (const Error& err) {
          error(cl, joint, bare(err));
          ok = false;
        }
      }
      if (!ok) continue;
      if (!std::isfinite(mimic.multiplier) || !std::isfinite(mimic.offset) ||
          !std::isfinite(mimic.reference)) {
        error(l, joint, "<mimic>: multiplier, offset and reference must be finite numbers");
        continue;
      }
      const auto leader = m->attribute("joint");
      if (!leader || leader->empty()) {
        error(l, joint, "<mimic> needs a joint attribute: the name of the leader joint");
        continue;
      }
      mimics_.push_back({joint, mimic, *leader, m->attribute("axis").value_or("axis"), m});
    }
  }
}

void Walker::resolve_mimics(ecs::Entity model) {
  std::vector<PendingMimic> rest;
  for (auto& p : mimics_) {
    if (reg_.parent(p.joint) != model) {
      rest.push_back(std::move(p));
      continue;
    }
    const Loc l{p.xml->file(), p.xml->line()};
    // The leader by name in the follower's model, "nested::joint" in a nested model.
    ecs::Entity at = model;
    std::size_t start = 0;
    while (at != ecs::kNullEntity) {
      const auto sep = p.leader.find("::", start);
      at = reg_.child_by_name(
          at, p.leader.substr(start, sep == std::string::npos ? std::string::npos : sep - start));
      if (sep == std::string::npos) break;
      start = sep + 2;
    }
    const std::string what = "<mimic joint='" + p.leader + "'>";
    if (at == ecs::kNullEntity || !reg_.has<c::Joint>(at)) {
      std::string joints;
      for (ecs::Entity ch : reg_.children(model)) {
        if (reg_.has<c::Joint>(ch))
          joints += (joints.empty() ? "" : ", ") + reg_.get<c::Name>(ch).value;
      }
      error(l, p.joint,
            what + ": no joint '" + p.leader + "' in model '" + reg_.scoped_name(model) +
                "' (joints: " + joints + ")");
      continue;
    }
    const auto& leader = reg_.get<c::JointData>(at);
    const unsigned axis = p.leader_axis == "axis" ? 0 : p.leader_axis == "axis2" ? 1 : 2;
    if (axis == 2) {
      error(l, p.joint, what + ": axis='" + p.leader_axis + "'; expected axis or axis2");
    } else if (!can_mimic(leader.type) || (axis == 1 && !leader.axis2)) {
      error(l, p.joint,
            what + ": joint '" + p.leader + "' has no " + p.leader_axis +
                " that a joint can follow (revolute, continuous, prismatic, "
                "universal and revolute2 joints have)");
    } else if (at == p.joint && axis == p.mimic.axis) {
      error(l, p.joint, what + ": an axis cannot follow itself");
    } else {
      p.mimic.leader = at;
      p.mimic.leader_axis = axis;
      auto* mimics = reg_.try_get<c::JointMimics>(p.joint);
      if (!mimics) mimics = &reg_.add<c::JointMimics>(p.joint);
      mimics->data.push_back(p.mimic);
    }
  }
  mimics_ = std::move(rest);
}

// ---- sensors and lights ----------------------------------------------------------------------

void Walker::sensor(const ::sdf::Sensor& s, ecs::Entity parent, const Pose3d& X_WP,
                    const std::string& relative_to) {
  const auto el = s.Element();
  // Joint sensors (relative_to "") have no pose graph in libsdformat 12: without an explicit
  // relative_to their raw pose is already in the joint frame.
  const bool raw = relative_to.empty() && s.PoseRelativeTo().empty();
  const Pose3d X =
      raw ? s.RawPose() : resolve(s.SemanticPose(), relative_to, el, "sensor '" + s.Name() + "'");
  const ecs::Entity e = create(parent, s.Name(), el, X, X_WP);
  ++d_.counts.sensors;
  c::Sensor data;
  data.element = original(el);
  if (!data.element) data.element = Element::parse(el->ToString(""), loc(el).file, loc(el).line);
  data.type = data.element->attribute("type").value_or("");
  try {
    data.update_rate = data.element->get_or<double>("update_rate", 0.0);
    data.topic = data.element->get_or<std::string>("topic", "");
    data.always_on = data.element->get_or<bool>("always_on", false);
  } catch (const Error& err) {
    error(loc(el), e, bare(err));
  }
  if (data.update_rate < 0 || !std::isfinite(data.update_rate)) {
    error(loc(el), e,
          "sensor update_rate must be >= 0 Hz, found " + fmt::format("{}", data.update_rate));
  }
  if (!known_sensor_type(data.type)) {
    unsupported(*data.element, e,
                "sensor type '" + data.type + "' is not supported by Kestrel: '" + s.Name() +
                    "' will produce no data");
  }
  d_.sensors.emplace_back(e, data.type);
  reg_.add<c::Sensor>(e, std::move(data));
  plugins(el, e);
}

void Walker::light(const ::sdf::Light& l, ecs::Entity parent, const Pose3d& X_WP,
                   const std::string& relative_to) {
  const auto el = l.Element();
  const Pose3d X = resolve(l.SemanticPose(), relative_to, el, "light '" + l.Name() + "'");
  const ecs::Entity e = create(parent, l.Name(), el, X, X_WP);
  ++d_.counts.lights;
  c::Light data;
  switch (l.Type()) {
    case ::sdf::LightType::POINT:
      data.type = "point";
      break;
    case ::sdf::LightType::SPOT:
      data.type = "spot";
      break;
    case ::sdf::LightType::DIRECTIONAL:
      data.type = "directional";
      break;
    default:
      data.type = "invalid";
      break;
  }
  data.cast_shadows = l.CastShadows();
  data.diffuse = rgb(l.Diffuse());
  data.specular = rgb(l.Specular());
  data.direction = l.Direction();
  data.range = l.AttenuationRange();
  data.attenuation_constant = l.ConstantAttenuationFactor();
  data.attenuation_linear = l.LinearAttenuationFactor();
  data.attenuation_quadratic = l.QuadraticAttenuationFactor();
  reg_.add<c::Light>(e, data);
  reg_.add<c::LightShading>(e, c::LightShading{l.Intensity(), l.SpotInnerAngle().Radian(),
                                               l.SpotOuterAngle().Radian(), l.SpotFalloff()});
}

}  // namespace kestrel::sdf::detail

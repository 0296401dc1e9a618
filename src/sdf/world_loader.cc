// The world loader: libsdformat 12 parses (once per file), Sources pre-scans the raw XML and
// holds the original elements, Walker turns the DOM into entities. libsdformat's own errors are
// mapped to findings, dropping those the walker reports better (with names and lines).

#include "kestrel/sdf/world_loader.h"

#include <mutex>
#include <regex>
#include <sdf/sdf.hh>
#include <sstream>

#include "kestrel/components/model.h"
#include "resource.h"
#include "sources.h"
#include "walker.h"

namespace kestrel::sdf {

namespace fs = std::filesystem;

// ---- findings -----------------------------------------------------------------------------

const char* severity_name(Severity s) { return s == Severity::kError ? "error" : "warning"; }

std::string format_finding(const Finding& f) {
  std::string where = f.file;
  if (f.line > 0) where += ":" + std::to_string(f.line);
  std::string out = std::string(severity_name(f.severity)) + ": " + where + ": ";
  if (!f.entity.empty()) out += "[" + f.entity + "] ";
  return out + f.message;
}

void Findings::error(std::string file, int line, std::string entity, std::string message) {
  items_.push_back(
      {Severity::kError, std::move(file), line, std::move(entity), std::move(message)});
}
void Findings::warning(std::string file, int line, std::string entity, std::string message) {
  items_.push_back(
      {Severity::kWarning, std::move(file), line, std::move(entity), std::move(message)});
}
std::size_t Findings::count(Severity s) const {
  std::size_t n = 0;
  for (const auto& f : items_) n += f.severity == s;
  return n;
}

namespace {

// libsdformat keeps global state (console, find callbacks): one load at a time per process.
std::mutex& sdformat_mutex() {
  static std::mutex m;
  return m;
}

// Captures libsdformat's console output for the duration of a load.
class ConsoleCapture {
 public:
  ConsoleCapture() {
    auto& s = ::sdf::Console::Instance()->GetMsgStream();
    previous_ = s.GetStream();
    s.SetStream(&buffer_);
  }
  ~ConsoleCapture() { ::sdf::Console::Instance()->GetMsgStream().SetStream(previous_); }
  std::string text() const { return buffer_.str(); }

 private:
  std::ostringstream buffer_;
  std::ostream* previous_ = nullptr;
};

std::string strip_ansi(const std::string& s) {
  static const std::regex kAnsi("\x1b\\[[0-9;]*m");
  return std::regex_replace(s, kAnsi, "");
}

::sdf::ParserConfig parser_config(const detail::Sources& sources, const fs::path& base_dir) {
  ::sdf::ParserConfig cfg;
  cfg.SetUnrecognizedElementsPolicy(::sdf::EnforcementPolicy::ERR);
  for (const auto& dir : sources.search()) cfg.AddURIPath("model://", dir.string());
  const auto search = sources.search();
  cfg.SetFindCallback([search, base_dir](const std::string& uri) -> std::string {
    return detail::resolve_uri(uri, base_dir, search).file.string();
  });
  return cfg;
}

// libsdformat's console warnings worth a finding: unknown attributes (with file:line) and
// versions newer than it understands.
void console_findings(const std::string& text, const detail::Sources& src, WorldDescription& d) {
  static const std::regex kAttr(
      R"(:([^:\]]+):L(\d+)\]: XML Attribute\[([^\]]+)\] in element\[([^\]]+)\] not defined in SDF)");
  static const std::regex kVersion(R"(Unable to convert from SDF version ([0-9.]+) to ([0-9.]+))");
  std::istringstream in(strip_ansi(text));
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, kAttr)) {
      const std::string file = src.display(m[1]);
      const int l = std::stoi(m[2]);
      d.unsupported.push_back("attribute " + std::string(m[3]) + " of <" + std::string(m[4]) +
                              "> (" + file + ":" + std::string(m[2]) + ")");
      d.findings.warning(file, l, "",
                         "unsupported attribute " + std::string(m[3]) + " of <" +
                             std::string(m[4]) + "> is ignored (not part of SDF 1.9)");
    } else if (std::regex_search(line, m, kVersion)) {
      d.findings.warning(d.file, 1, "",
                         "SDF version " + std::string(m[1]) +
                             " is newer than Kestrel's parser "
                             "understands (" +
                             std::string(m[2]) +
                             "); elements introduced since are reported as unsupported");
    }
  }
}

void sdformat_errors(const ::sdf::Errors& errors, const detail::Sources& src,
                     const detail::Walker& walker, WorldDescription& d) {
  using ::sdf::ErrorCode;
  static const std::regex kUnknown(R"(XML Element\[([^\]]+)\], child of element\[([^\]]+)\])");
  for (const auto& e : errors) {
    const std::string msg = e.Message();
    const std::string file = e.FilePath() ? src.display(*e.FilePath()) : d.file;
    const int line = e.LineNumber().value_or(0);
    std::smatch m;
    switch (e.Code()) {
      case ErrorCode::ELEMENT_INCORRECT_TYPE:
        if (std::regex_search(msg, m, kUnknown)) {
          // Content of sensors and plugins belongs to their systems (they report unread
          // parameters); elements the walker already reported are not repeated.
          if (m[2] == "sensor" || m[2] == "plugin" || walker.reported(file, line, m[1])) {
            continue;
          }
          d.unsupported.push_back("<" + std::string(m[1]) + "> (" + file + ":" +
                                  std::to_string(line) + ")");
          d.findings.warning(file, line, "",
                             "unknown element <" + std::string(m[1]) + "> in <" +
                                 std::string(m[2]) + "> is ignored (not part of SDF 1.9)");
          continue;
        }
        break;
      case ErrorCode::ATTRIBUTE_INVALID:
        if (msg.find("sensor type is missing or invalid") != std::string::npos) continue;
        break;
      case ErrorCode::ELEMENT_INVALID:
        if (msg.find("Failed to load a world") != std::string::npos) continue;
        break;
      case ErrorCode::DUPLICATE_NAME:
        if (src.duplicates_found()) continue;
        break;
      case ErrorCode::URI_LOOKUP:
      case ErrorCode::URI_INVALID:
      case ErrorCode::FILE_READ:
        if (!src.unresolved_uris().empty()) continue;
        break;
      case ErrorCode::JOINT_CHILD_LINK_INVALID:
      case ErrorCode::JOINT_PARENT_LINK_INVALID:
      case ErrorCode::LINK_INERTIA_INVALID:
      case ErrorCode::MODEL_WITHOUT_LINK:
        continue;  // the walker reports these with names and values
      default:
        break;
    }
    d.findings.error(file, line, "", msg);
  }
}

// Errors that mean the document could not be understood at all (bad values, unreadable
// elements): the reason libsdformat printed to its console is the useful part.
void throw_if_unusable(const ::sdf::Errors& errors, const std::string& file,
                       const std::string& console) {
  bool fatal = false;
  for (const auto& e : errors) {
    const auto c = e.Code();
    fatal = fatal || c == ::sdf::ErrorCode::FILE_READ || c == ::sdf::ErrorCode::STRING_READ ||
            c == ::sdf::ErrorCode::ATTRIBUTE_INCORRECT_TYPE;
  }
  if (!fatal) return;
  std::string where = file;
  std::string why;
  for (const auto& e : errors) {
    if (e.LineNumber() && where == file) {
      where = (e.FilePath() ? *e.FilePath() : file) + ":" + std::to_string(*e.LineNumber());
    }
  }
  static const std::regex kPrefix(R"(^\s*Error \[[^\]]*\]\s*(Unknown error\. )?)");
  std::istringstream in(strip_ansi(console));
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("Error") == std::string::npos) continue;
    why += (why.empty() ? "" : "; ") + std::regex_replace(line, kPrefix, "");
  }
  for (const auto& e : errors) {
    if (e.Code() == ::sdf::ErrorCode::FILE_READ) continue;
    why += (why.empty() ? "" : "; ") + e.Message();
  }
  throw UnreadableWorld(where,
                        "cannot parse SDF: " + (why.empty() ? errors.front().Message() : why));
}

WorldDescription load(detail::Sources& sources, bool from_file, const std::string& text_or_path,
                      ecs::Registry& registry, ecs::Entity world) {
  WorldDescription d;
  d.file = from_file ? text_or_path : text_or_path;
  std::lock_guard lock(sdformat_mutex());
  ::sdf::Root root;
  ::sdf::Errors errors;
  std::string console;
  {
    ConsoleCapture capture;
    const auto cfg =
        parser_config(sources, from_file ? fs::path(text_or_path).parent_path() : fs::path());
    errors =
        from_file ? root.Load(text_or_path, cfg) : root.LoadSdfString(sources.world_text(), cfg);
    console = capture.text();
  }
  throw_if_unusable(errors, d.file, console);
  if (root.WorldCount() == 0) {
    std::string why =
        root.Model() ? "it describes a model, not a world" : "no <world> element found";
    if (!errors.empty()) why += " (" + errors.front().Message() + ")";
    throw UnreadableWorld(d.file, "expected an SDF <world>: " + why);
  }
  if (root.WorldCount() > 1) {
    d.findings.error(d.file, 0, "",
                     "the file has " + std::to_string(root.WorldCount()) +
                         " worlds; Kestrel loads one world per file (the first)");
  }
  detail::Walker walker(registry, sources, d);
  walker.world(*root.WorldByIndex(0), world);
  sdformat_errors(errors, sources, walker, d);
  console_findings(console, sources, d);
  d.files = sources.files();
  return d;
}

}  // namespace

WorldDescription load_world_file(const fs::path& path, ecs::Registry& registry, ecs::Entity world,
                                 const LoadOptions& options) {
  detail::Sources sources(resource_search_path(options, path.parent_path()),
                          options.max_file_bytes);
  Findings prescan;
  sources.add_world_file(path, prescan);
  WorldDescription d = load(sources, true, path.string(), registry, world);
  // Pre-scan findings first (they are about the raw XML), then the loader's.
  auto& items = d.findings.items();
  items.insert(items.begin(), prescan.items().begin(), prescan.items().end());
  return d;
}

WorldDescription load_world_string(std::string_view sdf, ecs::Registry& registry, ecs::Entity world,
                                   const LoadOptions& options,
                                   const std::string& name_for_messages) {
  detail::Sources sources(resource_search_path(options, fs::path()), options.max_file_bytes);
  Findings prescan;
  sources.add_world_string(std::string(sdf), name_for_messages, prescan);
  WorldDescription d = load(sources, false, name_for_messages, registry, world);
  auto& items = d.findings.items();
  items.insert(items.begin(), prescan.items().begin(), prescan.items().end());
  return d;
}

// ---- ModelCache --------------------------------------------------------------------------------

struct ModelCache::Parsed {
  std::unique_ptr<detail::Sources> sources;
  ::sdf::Root root;
  Findings prescan;
  std::string file;
};

ModelCache::ModelCache(LoadOptions options) : options_(std::move(options)) {}
ModelCache::~ModelCache() = default;

ecs::Entity ModelCache::spawn(const fs::path& file_or_dir, ecs::Registry& registry,
                              ecs::Entity parent, const std::string& name,
                              const ignition::math::Pose3d& pose, Findings* findings,
                              std::vector<PluginDecl>* plugins) {
  std::error_code ec;
  fs::path file = file_or_dir;
  if (fs::is_directory(file, ec)) {
    file = detail::model_dir_sdf(file_or_dir);
    if (file.empty()) {
      throw UnreadableWorld(file_or_dir.string(),
                            "model directory has no model.config or model.sdf");
    }
  }
  const std::string key = fs::weakly_canonical(file, ec).string();
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    auto p = std::make_unique<Parsed>();
    p->file = file.string();
    p->sources = std::make_unique<detail::Sources>(
        resource_search_path(options_, file.parent_path()), options_.max_file_bytes);
    p->sources->add_world_file(file, p->prescan);
    {
      std::lock_guard lock(sdformat_mutex());
      ConsoleCapture capture;
      const auto errors =
          p->root.Load(file.string(), parser_config(*p->sources, file.parent_path()));
      throw_if_unusable(errors, file.string(), capture.text());
    }
    if (!p->root.Model()) {
      throw UnreadableWorld(file.string(), "expected an SDF file with one <model>");
    }
    ++parse_count_;
    it = cache_.emplace(key, std::move(p)).first;
  }
  Parsed& p = *it->second;
  const auto& m = *p.root.Model();
  const std::string n = name.empty() ? m.Name() : name;
  if (registry.child_by_name(parent, n) != ecs::kNullEntity) {
    throw Error(registry.scoped_name(parent),
                "cannot spawn model '" + n + "': a sibling with that name already exists");
  }
  WorldDescription d;
  d.file = p.file;
  detail::Walker walker(registry, *p.sources, d);
  const auto* wp = registry.try_get<components::WorldPose>(parent);
  const ecs::Entity e =
      walker.model(m, parent, wp ? wp->value : ignition::math::Pose3d{}, pose, n, false);
  if (findings) {
    for (const auto& f : p.prescan.items()) findings->add(f);
    for (const auto& f : d.findings.items()) findings->add(f);
  }
  if (plugins) plugins->insert(plugins->end(), d.plugins.begin(), d.plugins.end());
  return e;
}

}  // namespace kestrel::sdf

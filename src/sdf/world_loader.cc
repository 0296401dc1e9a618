// The world loader: libsdformat 12 parses (once per file), Sources pre-scans the raw XML and
// holds the original elements, Walker turns the DOM into entities. libsdformat's own errors are
// mapped to findings, dropping those the walker reports better (with names and lines).

#include "kestrel/sdf/world_loader.h"

#include <console_bridge/console.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <sdf/sdf.hh>
#include <set>
#include <sstream>

#include "kestrel/components/joint_mimic.h"
#include "kestrel/components/model.h"
#include "kestrel/core/interrupt.h"
#include "kestrel/core/memory.h"
#include "kestrel/fuel/fuel.h"
#include "kestrel/sdf/world_loader.h"
#include "resource.h"
#include "sources.h"
#include "spec.h"
#include "walker.h"

namespace kestrel::sdf {

namespace fs = std::filesystem;
namespace c = kestrel::components;

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

// The path handed to libsdformat: absolute, because it looks a relative name up in its own
// share folder first, so a "world.sdf" or "model.sdf" in the working directory would be taken
// for its specification file of that name. Messages show the name the user gave (Sources).
std::string sdformat_path(const fs::path& file) {
  std::error_code ec;
  const fs::path p = fs::absolute(file, ec);
  return ec ? file.string() : p.string();
}

::sdf::ParserConfig parser_config(const detail::Sources& sources, const fs::path& base_dir) {
  // A file libsdformat cannot read as SDF is retried as URDF, whose parser then prints
  // "Could not find the 'robot' element" to stderr: noise beside the real SDF error Kestrel
  // reports. Kestrel never loads URDF through libsdformat, so that logger is turned off.
  static const bool urdf_quiet = [] {
    console_bridge::setLogLevel(console_bridge::CONSOLE_BRIDGE_LOG_NONE);
    return true;
  }();
  (void)urdf_quiet;
  ::sdf::ParserConfig cfg;
  cfg.SetUnrecognizedElementsPolicy(::sdf::EnforcementPolicy::ERR);
  for (const auto& dir : sources.search()) cfg.AddURIPath("model://", dir.string());
  const auto search = sources.search();
  cfg.SetFindCallback([search, base_dir](const std::string& uri) -> std::string {
    return detail::resolve_uri(uri, base_dir, search).file.string();
  });
  // libsdformat 12 resolves the includes of a model merged by <include merge="true"> inside an
  // included file (PX4's x500_depth → x500 → x500_base) with its global configuration, not this
  // one: it learns the same model:// folders (once each; they only add places to look).
  static std::mutex global_mutex;
  static std::set<std::string> global_dirs;
  std::lock_guard lock(global_mutex);
  for (const auto& dir : search) {
    if (global_dirs.insert(dir.string()).second) {
      ::sdf::ParserConfig::GlobalConfig().AddURIPath("model://", dir.string());
    }
  }
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
  // A joint naming a link that does not exist (the walker names both) leaves libsdformat's
  // frame graphs incomplete: their errors are consequences, in graph terms, and not repeated.
  const bool link_missing = std::any_of(errors.begin(), errors.end(), [](const auto& e) {
    return e.Code() == ErrorCode::JOINT_CHILD_LINK_INVALID ||
           e.Code() == ErrorCode::JOINT_PARENT_LINK_INVALID;
  });
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
          // Newer than SDF 1.9 and read by the walker from the original text.
          if (m[2] == "inertial" && m[1] == "fluid_added_mass") continue;
          if (const auto meant = detail::misspelling_of(m[2], m[1]); !meant.empty()) {
            d.findings.error(file, line, "", detail::misspelling_message(m[2], m[1], meant));
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
        // The walker reports a zero axis at its line, naming the joint.
        if (msg.find("norm of the xyz vector cannot be zero") != std::string::npos) continue;
        break;
      case ErrorCode::DUPLICATE_NAME:
        if (src.duplicates_found()) continue;
        break;
      case ErrorCode::URI_LOOKUP:
      case ErrorCode::URI_INVALID:
      case ErrorCode::FILE_READ:
        if (!src.unresolved_uris().empty()) continue;
        break;
      case ErrorCode::FRAME_ATTACHED_TO_INVALID:
      case ErrorCode::FRAME_ATTACHED_TO_GRAPH_ERROR:
      case ErrorCode::POSE_RELATIVE_TO_INVALID:
      case ErrorCode::POSE_RELATIVE_TO_GRAPH_ERROR:
        if (link_missing) continue;
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

// libsdformat 12 lets some standard-library exceptions escape (its std::stoi on odd values):
// every call into it goes through here, so they become an UnreadableWorld naming the file.
template <typename F>
::sdf::Errors guarded_sdformat(const std::string& file, F&& call) {
  try {
    return call();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw UnreadableWorld(
        file, std::string("libsdformat could not read it (it failed with '") + e.what() + "')");
  }
}

// Errors that mean the document could not be understood at all (bad values, unreadable
// elements): the reason libsdformat printed to its console is the useful part.
void throw_if_unusable(const ::sdf::Errors& errors, const std::string& file,
                       const std::string& console, const detail::Sources& sources) {
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
      where = sources.display(e.FilePath() ? *e.FilePath() : file) + ":" +
              std::to_string(*e.LineNumber());
    }
  }
  // Its URDF retry and the text it was given (a whole world) say nothing about the error.
  auto add = [&why](std::string m) {
    if (m.find("parseURDF") != std::string::npos ||
        m.find("deprecated model file") != std::string::npos) {
      return;
    }
    if (const auto at = m.find("Unable to read SDF string"); at != std::string::npos) {
      m = m.substr(0, at) + "Unable to read SDF string";
    }
    why += (why.empty() ? "" : "; ") + m;
  };
  static const std::regex kPrefix(R"(^\s*Error \[[^\]]*\]\s*(Unknown error\. )?)");
  std::istringstream in(strip_ansi(console));
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("Error") != std::string::npos) add(std::regex_replace(line, kPrefix, ""));
  }
  for (const auto& e : errors) {
    if (e.Code() != ::sdf::ErrorCode::FILE_READ) add(e.Message());
  }
  throw UnreadableWorld(where,
                        "cannot parse SDF: " + (why.empty() ? errors.front().Message() : why));
}

// ---- instanced includes ----------------------------------------------------------------------
//
// libsdformat builds a full DOM for every <include>, so a world that includes one model N times
// parses it N times (a 100-vehicle swarm: 8.6 MB and ~20 ms per vehicle). Kestrel takes the
// world-level includes it can place without libsdformat's frame graph out of the text it hands to
// libsdformat (blanked, so every line number stays), parses each included file once, and builds
// each instance from that one DOM. An include stays with libsdformat when its placement needs
// the frame graph: a <pose> with attributes other than relative_to="world", <placement_frame>,
// <static>false</static>, a name that a relative_to/attached_to or a world joint refers to, or a
// file that is not a single <model>.

struct Instance {
  std::shared_ptr<const Element> include;  // the <include>, or the inline <model>
  fs::path file;
  // An inline <model> directly under <world> that has identical twins (only their name and
  // <pose> differ): parsed once as `text` (the first twin, at its own lines), shared by `group`.
  std::string text;
  int group = -1;
  double dom_bytes = 0;                        // what libsdformat would have kept for it
  std::string name;                            // empty: the model's own
  std::optional<ignition::math::Pose3d> pose;  // empty: the model's own
  bool is_static = false;
};

// Byte ranges of the <include> elements of `t` in document order, outside comments and CDATA.
std::vector<std::pair<std::size_t, std::size_t>> include_spans(const std::string& t) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  constexpr auto npos = std::string::npos;
  for (std::size_t i = t.find('<'); i != npos; i = t.find('<', i)) {
    std::string_view rest(t.data() + i, t.size() - i);
    if (rest.starts_with("<!--") || rest.starts_with("<![CDATA[")) {
      const std::size_t end = t.find(rest[1] == '!' && rest[2] == '-' ? "-->" : "]]>", i);
      if (end == npos) return {};
      i = end + 3;
      continue;
    }
    const bool is_include =
        rest.starts_with("<include") && rest.size() > 8 &&
        (std::isspace(static_cast<unsigned char>(rest[8])) || rest[8] == '>' || rest[8] == '/');
    if (!is_include) {
      ++i;
      continue;
    }
    const std::size_t gt = t.find('>', i);
    if (gt == npos) return {};
    std::size_t end = gt + 1;
    if (t[gt - 1] != '/') {
      const std::size_t close = t.find("</include", gt);
      end = close == npos ? npos : t.find('>', close);
      if (end == npos) return {};
      ++end;
    }
    out.emplace_back(i, end);
    i = end;
  }
  return out;
}

void collect_includes(const std::shared_ptr<const Element>& e, const Element* parent,
                      std::vector<std::pair<std::shared_ptr<const Element>, const Element*>>& out) {
  if (e->name() == "include") out.emplace_back(e, parent);
  for (const auto& c : e->children()) collect_includes(c, e.get(), out);
}

// Frame names the world refers to: relative_to and attached_to values, world joints' ends.
void collect_references(const Element& e, bool in_world, std::vector<std::string>& out) {
  for (const char* a : {"relative_to", "attached_to"}) {
    if (auto v = e.attribute(a)) out.push_back(*v);
  }
  for (const auto& c : e.children()) {
    if (in_world && e.name() == "joint" && (c->name() == "parent" || c->name() == "child")) {
      out.push_back(c->text());
    }
    collect_references(*c, in_world || e.name() == "world", out);
  }
}

// Byte ranges of the <model> elements directly under <world> in `t`, in document order, outside
// comments, CDATA and processing instructions; empty when the text does not scan.
std::vector<std::pair<std::size_t, std::size_t>> world_model_spans(const std::string& t) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  std::vector<std::string> open;  // element names from the root
  std::size_t start = 0;
  constexpr auto npos = std::string::npos;
  for (std::size_t i = t.find('<'); i != npos; i = t.find('<', i)) {
    std::string_view rest(t.data() + i, t.size() - i);
    const char* close = rest.starts_with("<!--")        ? "-->"
                        : rest.starts_with("<![CDATA[") ? "]]>"
                        : rest.starts_with("<?")        ? "?>"
                        : rest.starts_with("<!")        ? ">"
                                                        : nullptr;
    if (close) {
      const std::size_t end = t.find(close, i);
      if (end == npos) return {};
      i = end + std::strlen(close);
      continue;
    }
    std::size_t gt = i + 1;  // the tag's '>', outside quoted attribute values
    char quote = 0;
    for (; gt < t.size() && (quote || t[gt] != '>'); ++gt) {
      if (quote && t[gt] == quote) {
        quote = 0;
      } else if (!quote && (t[gt] == '"' || t[gt] == '\'')) {
        quote = t[gt];
      }
    }
    if (gt >= t.size()) return {};
    const bool end_tag = t[i + 1] == '/';
    std::size_t n = i + (end_tag ? 2 : 1);
    std::size_t name_end = n;
    while (name_end < gt && !std::isspace(static_cast<unsigned char>(t[name_end])) &&
           t[name_end] != '/') {
      ++name_end;
    }
    const std::string name = t.substr(n, name_end - n);
    const bool empty = !end_tag && t[gt - 1] == '/';
    const bool world_model = name == "model" && open.size() == 2 && open[1] == "world";
    if (end_tag) {
      if (open.empty() || open.back() != name) return {};
      open.pop_back();
      if (name == "model" && open.size() == 2 && open[1] == "world")
        out.emplace_back(start, gt + 1);
    } else if (empty) {
      if (world_model) out.emplace_back(i, gt + 1);
    } else {
      if (world_model) start = i;
      open.push_back(name);
    }
    i = gt + 1;
  }
  return open.empty() ? out : std::vector<std::pair<std::size_t, std::size_t>>{};
}

// An element as a string of its names, attributes and texts, without the root's name attribute
// and its <pose> child: equal for models that differ only in those.
void shape_key(const Element& e, bool root, std::string& out) {
  out += '<';
  out += e.name();
  for (const auto& a : e.attribute_names()) {
    if (root && a == "name") continue;
    out += ' ' + a + '=' + e.attribute(a).value_or("");
  }
  out += '>';
  out += e.text();
  for (const auto& c : e.children()) {
    if (root && c->name() == "pose") continue;
    shape_key(*c, false, out);
  }
  out += "</>";
}

bool has_descendant(const Element& e, std::string_view name) {
  for (const auto& c : e.children()) {
    if (c->name() == name || has_descendant(*c, name)) return true;
  }
  return false;
}

double dom_bytes_of(const Element& e) {
  double b = detail::dom_weight(e.name());
  for (const auto& c : e.children()) b += dom_bytes_of(*c);
  return b;
}

// Inline models parse once per shape: a world of thousands of identical models (gz-sim's
// 3k_shapes.sdf: 1001 each of three) would otherwise take libsdformat ~2.6 MiB and ~8 ms per
// model. Models with at least kTwinsToInstance twins that differ only in name and <pose>
// (world-relative, radians), that hold no <include> and that nothing refers to by name become
// instances of their first twin and are blanked out of `text`.
constexpr std::size_t kTwinsToInstance = 16;
void plan_inline_models(const Element& root, std::string& text,
                        const std::function<bool(const std::string&)>& referenced,
                        std::vector<Instance>& out) {
  const Element* world = root.child("world");
  if (!world) return;
  const auto models = world->children("model");
  if (models.size() < kTwinsToInstance) return;
  const auto spans = world_model_spans(text);
  if (spans.size() != models.size()) return;
  std::map<std::string, std::vector<std::size_t>> twins;
  for (std::size_t k = 0; k < models.size(); ++k) {
    const Element& m = *models[k];
    const auto name = m.attribute("name");
    const Element* pose = nullptr;
    for (const auto& c : m.children()) {
      if (c->name() == "pose") pose = c.get();
    }
    if (!name || name->empty() || referenced(*name) || has_descendant(m, "include")) continue;
    if (pose && ((pose->attribute("relative_to") && *pose->attribute("relative_to") != "world") ||
                 pose->attribute("degrees") || pose->attribute("rotation_format"))) {
      continue;
    }
    std::string key;
    shape_key(m, true, key);
    twins[key].push_back(k);
  }
  const std::string version = root.attribute("version").value_or("1.9");
  int group = 0;
  for (const auto& [key, ks] : twins) {
    if (ks.size() < kTwinsToInstance) continue;
    const auto [from, to] = spans[ks.front()];
    // The first twin at its own lines: its elements carry the world file's line numbers.
    const int line = models[ks.front()]->line();
    std::string doc = "<sdf version='" + version + "'>";
    doc.append(static_cast<std::size_t>(std::max(0, line - 1)), '\n');
    doc += text.substr(from, to - from);
    doc += "</sdf>";
    for (std::size_t k : ks) {
      const Element& m = *models[k];
      Instance in;
      for (const auto& c : world->children()) {
        if (c.get() == &m) in.include = c;
      }
      in.name = *m.attribute("name");
      in.pose = ignition::math::Pose3d::Zero;
      for (const auto& c : m.children()) {
        if (c->name() != "pose") continue;
        try {
          in.pose = c->value<ignition::math::Pose3d>();
        } catch (const Error&) {
          in.pose.reset();
        }
      }
      if (!in.pose) continue;  // libsdformat reports it where it is
      in.group = group;
      in.dom_bytes = dom_bytes_of(m);
      if (k == ks.front()) in.text = doc;
      for (std::size_t i = spans[k].first; i < spans[k].second; ++i) {
        if (text[i] != '\n') text[i] = ' ';
      }
      out.push_back(std::move(in));
    }
    ++group;
  }
  // In document order (the first twin of each shape comes first, as it must: it is parsed).
  std::stable_sort(out.begin(), out.end(), [](const Instance& a, const Instance& b) {
    return a.include->line() < b.include->line();
  });
}

// Decides which includes (and inline models) to instance and blanks them out of `text`.
std::vector<Instance> plan_instances(const detail::Sources& sources, const fs::path& base_dir,
                                     std::string& text) {
  if (sources.files().empty()) return {};
  const auto root = sources.root(sources.files().front());
  if (!root) return {};
  std::vector<std::pair<std::shared_ptr<const Element>, const Element*>> includes;
  collect_includes(root, nullptr, includes);
  const auto spans = include_spans(text);
  std::vector<std::string> refs;
  collect_references(*root, false, refs);
  auto referenced = [&](const std::string& n) {
    for (const auto& r : refs) {
      if (r == n ||
          (r.size() > n.size() + 2 && r.starts_with(n) && r.compare(n.size(), 2, "::") == 0))
        return true;
    }
    return false;
  };
  std::vector<Instance> out;
  plan_inline_models(*root, text, referenced, out);
  if (spans.size() != includes.size()) return out;
  for (std::size_t k = 0; k < includes.size(); ++k) {
    const auto& [inc, parent] = includes[k];
    if (!parent || parent->name() != "world") continue;
    Instance in;
    in.include = inc;
    bool ok = true;
    for (const auto& c : inc->children()) {
      const std::string& n = c->name();
      if (n == "uri" || n == "plugin") continue;
      if (n == "name") {
        in.name = c->text();
      } else if (n == "pose") {
        const auto rel = c->attribute("relative_to");
        ok = ok && (!rel || *rel == "world") && !c->attribute("degrees") &&
             !c->attribute("rotation_format");
        try {
          in.pose = c->value<ignition::math::Pose3d>();
        } catch (const Error&) {
          ok = false;  // libsdformat reports it
        }
      } else if (n == "static") {
        try {
          in.is_static = c->value<bool>();
        } catch (const Error&) {
          ok = false;
        }
        ok = ok && in.is_static;
      } else {
        ok = false;
      }
    }
    const auto* uri = inc->child("uri");
    if (!ok || !uri) continue;
    const auto r = detail::resolve_uri(uri->text(), base_dir, sources.search());
    if (r.file.empty()) continue;
    const auto model_root = sources.root(r.file.string());
    if (!model_root || model_root->children("model").size() != 1 ||
        model_root->children().size() != 1) {
      continue;
    }
    const std::string name =
        in.name.empty() ? model_root->child("model")->attribute("name").value_or("") : in.name;
    if (name.empty() || referenced(name)) continue;
    in.file = r.file;
    for (std::size_t i = spans[k].first; i < spans[k].second; ++i) {
      if (text[i] != '\n') text[i] = ' ';
    }
    out.push_back(std::move(in));
  }
  return out;
}

// Parses a model file with libsdformat (the caller holds sdformat_mutex).
// @throws UnreadableWorld if it cannot be parsed or holds no <model>.
std::unique_ptr<::sdf::Root> parse_model_file(const fs::path& file, const detail::Sources& sources,
                                              ::sdf::Errors& errors, std::string& console) {
  auto root = std::make_unique<::sdf::Root>();
  {
    ConsoleCapture capture;
    errors = root->Load(sdformat_path(file), parser_config(sources, detail::directory_of(file)));
    console = capture.text();
  }
  throw_if_unusable(errors, file.string(), console, sources);
  if (!root->Model()) {
    throw UnreadableWorld(file.string(), "expected an SDF file with one <model>");
  }
  return root;
}

void spawn_instances(const std::vector<Instance>& instances, detail::Sources& sources,
                     const fs::path& base_dir, detail::Walker& walker, ecs::Registry& registry,
                     ecs::Entity world, WorldDescription& d) {
  std::map<std::string, std::unique_ptr<::sdf::Root>> parsed;
  for (const Instance& in : instances) {
    throw_if_interrupted("loading " + d.file);
    auto& root = parsed[in.group >= 0 ? "\n" + std::to_string(in.group) : in.file.string()];
    if (!root && in.group >= 0) {  // an inline model's first twin
      ::sdf::Errors errors;
      std::string console;
      root = std::make_unique<::sdf::Root>();
      {
        ConsoleCapture capture;
        errors = root->LoadSdfString(in.text, parser_config(sources, base_dir));
        console = capture.text();
      }
      throw_if_unusable(errors, d.file, console, sources);
      sdformat_errors(errors, sources, walker, d);
      console_findings(console, sources, d);
      if (!root->Model()) {
        throw UnreadableWorld(
            d.file, fmt::format("line {}: the <model> did not parse as one", in.include->line()));
      }
    } else if (!root) {
      ::sdf::Errors errors;
      std::string console;
      root = parse_model_file(in.file, sources, errors, console);
      sdformat_errors(errors, sources, walker, d);
      console_findings(console, sources, d);
    }
    const auto& m = *root->Model();
    const std::string name = in.name.empty() ? m.Name() : in.name;
    const std::string& file = d.file;
    const int line = in.include->line();
    if (registry.child_by_name(world, name) != ecs::kNullEntity) {
      d.findings.error(file, line, "",
                       "duplicate name '" + name +
                           (in.group >= 0 ? "': a <model> in <world> has the name of a sibling"
                                          : "': <include> names a model like a sibling in "
                                            "<world>") +
                           "; names must be unique among siblings");
      continue;
    }
    const ecs::Entity e =
        walker.model(m, world, {}, in.pose.value_or(m.RawPose()), name, in.is_static);
    ++d.instanced;
    if (in.group >= 0) continue;  // its own <plugin>s are the model's (the walker's)
    for (const Element* p : in.include->children("plugin")) {
      PluginDecl decl;
      decl.entity = e;
      decl.file = file;
      decl.line = p->line();
      for (const auto& c : in.include->children()) {
        if (c.get() == p) decl.config = c;
      }
      decl.filename = p->attribute("filename").value_or("");
      decl.name = p->attribute("name").value_or("");
      if (decl.filename.empty()) {
        d.findings.error(file, decl.line, registry.scoped_name(e),
                         "<plugin name='" + decl.name + "'> has no filename attribute");
        continue;
      }
      d.plugins.push_back(std::move(decl));
    }
  }
}

// libsdformat builds its document in one call that cannot be interrupted and keeps megabytes
// per model (Sources::dom_bytes): estimated first, and refused with the numbers when it does not
// fit the memory there is (a 10,000-model world needs ~28 GiB). Instanced includes are parsed
// once per file.
void check_dom_memory(const detail::Sources& sources, const std::string& file,
                      const std::vector<Instance>& instances) {
  if (sources.files().empty()) return;
  double bytes = sources.dom_bytes(sources.files().front());
  std::map<std::string, int> uses;
  for (const auto& in : instances) {
    if (in.group < 0) {
      ++uses[in.file.string()];
    } else if (in.text.empty()) {
      bytes -= in.dom_bytes;  // an inline twin: parsed once, with the first
    }
  }
  for (const auto& [f, n] : uses) bytes -= (n - 1) * sources.dom_bytes(f);
  const MemoryBudget budget = memory_budget();
  if (bytes > static_cast<double>(budget.bytes)) {
    throw Error(file,
                fmt::format("not enough memory to load this world: libsdformat 12 would take ~{} "
                            "for its document (it keeps ~1.6 MiB per <model>, ~1 MiB per <link>, "
                            "~0.6 MiB per <joint> or <sensor>), {} is available ({}). Nothing was "
                            "loaded. Fewer models per world, or <include> one model file many "
                            "times (parsed once: src/sdf/README.md, \"Includes\")",
                            format_bytes(bytes), format_bytes(static_cast<double>(budget.bytes)),
                            budget.source));
  }
}

// URDF <mimic>s, which libsdformat 12's conversion drops, become the joint equality
// constraints SDF 1.11 <mimic> becomes (components::JointMimics, reference 0): follower =
// multiplier · leader + offset. The model is the world-level one its <include> names.
void urdf_mimics(const detail::Sources& sources, ecs::Registry& registry, ecs::Entity world,
                 WorldDescription& d) {
  for (const auto& inc : sources.urdf_includes()) {
    if (inc.robot.mimics.empty()) continue;
    const std::string display = sources.display(inc.file);
    const std::string name = inc.name.empty() ? inc.robot.name : inc.name;
    const ecs::Entity model = registry.child_by_name(world, name);
    for (const auto& m : inc.robot.mimics) {
      if (model == ecs::kNullEntity || !registry.has<c::Model>(model)) {
        d.findings.error(display, m.line, m.follower,
                         "<mimic> of joint '" + m.follower + "': the URDF model '" + name +
                             "' is not a model of the world (Kestrel restores URDF mimics of "
                             "world-level <include>s only)");
        continue;
      }
      const ecs::Entity follower = registry.child_by_name(model, m.follower);
      const ecs::Entity leader = registry.child_by_name(model, m.leader);
      for (const auto& [e, j] : {std::pair{follower, m.follower}, std::pair{leader, m.leader}}) {
        if (e == ecs::kNullEntity || !registry.has<c::JointData>(e)) {
          d.findings.error(display, m.line, registry.scoped_name(model),
                           "<mimic> of joint '" + m.follower + "': joint '" + j +
                               "' is not in the converted model (libsdformat's conversion "
                               "left it out: see the errors about its links)");
        }
      }
      if (follower == ecs::kNullEntity || leader == ecs::kNullEntity ||
          !registry.has<c::JointData>(follower) || !registry.has<c::JointData>(leader)) {
        continue;
      }
      c::JointMimic mimic;
      mimic.leader = leader;
      mimic.multiplier = m.multiplier;
      mimic.offset = m.offset;
      auto* mimics = registry.try_get<c::JointMimics>(follower);
      if (!mimics) mimics = &registry.add<c::JointMimics>(follower);
      mimics->data.push_back(mimic);
    }
  }
}

WorldDescription load(detail::Sources& sources, bool from_file, const std::string& text_or_path,
                      ecs::Registry& registry, ecs::Entity world) {
  WorldDescription d;
  d.file = text_or_path;
  std::lock_guard lock(sdformat_mutex());
  ::sdf::Root root;
  ::sdf::Errors errors;
  std::string console;
  const fs::path base_dir = from_file ? detail::directory_of(text_or_path) : fs::path();
  std::string text = sources.world_text();
  const std::vector<Instance> instances = plan_instances(sources, base_dir, text);
  check_dom_memory(sources, d.file, instances);
  throw_if_interrupted("loading " + d.file);
  {
    ConsoleCapture capture;
    const auto cfg = parser_config(sources, base_dir);
    // With instances, libsdformat reads the blanked text: its elements then carry no file
    // name, which the walker and the findings take as the world file.
    errors = guarded_sdformat(d.file, [&] {
      return from_file && instances.empty() ? root.Load(sdformat_path(text_or_path), cfg)
                                            : root.LoadSdfString(text, cfg);
    });
    console = capture.text();
  }
  throw_if_unusable(errors, d.file, console, sources);
  throw_if_interrupted("loading " + d.file);
  if (root.WorldCount() == 0) {
    // A Fuel model an included file includes, not in the cache, costs libsdformat the whole
    // world ("Unable to find uri"): the error is the pre-scan's, with its fetch command.
    for (const auto& uri : sources.unresolved_uris()) {
      if (fuel::is_web_uri(uri)) {
        throw UnreadableWorld(d.file, "cannot resolve <include> '" + uri + "': " +
                                          fuel::missing_advice(uri, fuel::cache_paths()));
      }
    }
    std::string why =
        root.Model() ? "it describes a model, not a world (`kestrel check` checks a model file in "
                       "an empty world)"
                     : "no <world> element found";
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
  urdf_mimics(sources, registry, world, d);
  sdformat_errors(errors, sources, walker, d);
  console_findings(console, sources, d);
  spawn_instances(instances, sources, base_dir, walker, registry, world, d);
  d.files = sources.files();
  return d;
}

}  // namespace

WorldDescription load_world_file(const fs::path& path, ecs::Registry& registry, ecs::Entity world,
                                 const LoadOptions& options) {
  detail::Sources sources(resource_search_path(options, detail::directory_of(path)),
                          options.max_file_bytes);
  Findings prescan;
  sources.add_world_file(path, prescan);
  const auto root = sources.root(sources.files().front());
  WorldDescription d;
  // A URDF file is a model (a <robot>): it always runs and checks in an empty world.
  const bool urdf = root && root->name() == "robot";
  if (urdf || (options.model_as_world && root && root->has("model") && !root->has("world"))) {
    // A model in a models folder includes its siblings (PX4's x500 includes model://x500_base):
    // that folder is searched last.
    auto search = sources.search();
    std::error_code ec;
    search.push_back(fs::absolute(detail::directory_of(path), ec).parent_path());
    detail::Sources wrapped(std::move(search), options.max_file_bytes);
    prescan = {};
    wrapped.add_model_as_world(path, prescan);
    d = load(wrapped, false, path.string(), registry, world);
    d.model_file_of = urdf ? root->attribute("name").value_or("")
                           : root->child("model")->attribute("name").value_or("");
  } else {
    d = load(sources, true, path.string(), registry, world);
  }
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
  std::uint64_t last_use = 0;
};

ModelCache::ModelCache(LoadOptions options, std::size_t capacity)
    : options_(std::move(options)), capacity_(std::max<std::size_t>(1, capacity)) {}
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
  // The file's identity and version: an edited file (another size or modification time) is
  // another entry, parsed afresh.
  const auto size = fs::file_size(file, ec);
  const auto mtime = ec ? fs::file_time_type{} : fs::last_write_time(file, ec);
  const std::string key = fmt::format("{}|{}|{}", fs::weakly_canonical(file, ec).string(), size,
                                      mtime.time_since_epoch().count());
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    // Room first: drop the entries used longest ago (another version of this file among them
    // once it is unused).
    while (cache_.size() >= capacity_) {
      auto oldest = std::min_element(
          cache_.begin(), cache_.end(),
          [](const auto& a, const auto& b) { return a.second->last_use < b.second->last_use; });
      cache_.erase(oldest);
    }
    auto p = std::make_unique<Parsed>();
    p->file = file.string();
    p->sources = std::make_unique<detail::Sources>(
        resource_search_path(options_, detail::directory_of(file)), options_.max_file_bytes);
    p->sources->add_world_file(file, p->prescan);
    check_dom_memory(*p->sources, file.string(), {});
    {
      std::lock_guard lock(sdformat_mutex());
      ConsoleCapture capture;
      const auto errors = guarded_sdformat(file.string(), [&] {
        return p->root.Load(sdformat_path(file),
                            parser_config(*p->sources, detail::directory_of(file)));
      });
      throw_if_unusable(errors, file.string(), capture.text(), *p->sources);
    }
    if (!p->root.Model()) {
      throw UnreadableWorld(file.string(), "expected an SDF file with one <model>");
    }
    ++parse_count_;
    it = cache_.emplace(key, std::move(p)).first;
  }
  Parsed& p = *it->second;
  p.last_use = ++uses_;
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

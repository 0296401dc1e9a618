#include "sources.h"

#include <spdlog/spdlog.h>
#include <tinyxml2.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <system_error>

#include "kestrel/core/files.h"
#include "kestrel/core/interrupt.h"
#include "kestrel/core/text.h"
#include "kestrel/fuel/fuel.h"
#include "kestrel/sdf/world_loader.h"
#include "resource.h"

namespace kestrel::sdf::detail {

namespace fs = std::filesystem;

std::string read_file_checked(const fs::path& path, std::size_t max_bytes) {
  // Opened without blocking and read only when a regular file (a FIFO, /dev/zero or a /proc
  // file is refused, never waited on or read without end).
  RegularFile f(path, max_bytes);
  if (!f.problem().empty()) {
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(path, ec))) {
      throw UnreadableWorld(path.string(), "file does not exist");
    }
    if (fs::is_directory(path, ec)) {
      throw UnreadableWorld(path.string(), "expected an SDF file, found a directory");
    }
    throw UnreadableWorld(path.string(), f.problem().starts_with("is ")
                                             ? "file " + f.problem()
                                             : "cannot read file: " + f.problem());
  }
  try {
    return f.read_all();
  } catch (const Error& e) {
    throw UnreadableWorld(e.what());
  }
}

namespace {

bool is_placeholder(std::string_view v) {
  v = trim(v);
  return v.size() > 4 && v.starts_with("__") && v.ends_with("__");
}

// Name kinds that share one namespace inside a model or world (SDF frame semantics).
bool is_frame_kind(std::string_view tag) {
  return tag == "link" || tag == "joint" || tag == "frame" || tag == "model";
}
bool is_named_kind(std::string_view tag) {
  return is_frame_kind(tag) || tag == "collision" || tag == "visual" || tag == "sensor" ||
         tag == "light";
}

}  // namespace

// libsdformat 12 keeps, for every element it reads, a copy of the element's whole description
// from the SDF specification: measured with `kestrel check` on generated worlds (Debian 12's
// libsdformat 12), per element with its usual children, rounded up. Other elements are
// counted inside their parent's figure.
double dom_weight(std::string_view tag) {
  constexpr double kMiB = 1 << 20;
  if (tag == "model") return 1.6 * kMiB;
  if (tag == "link") return 1.0 * kMiB;
  if (tag == "joint" || tag == "sensor") return 0.6 * kMiB;
  if (tag == "collision" || tag == "visual") return 0.2 * kMiB;
  if (tag == "light" || tag == "actor" || tag == "plugin" || tag == "frame") return 0.1 * kMiB;
  return 0;
}

namespace {

std::string join_paths(const std::vector<fs::path>& paths) {
  std::string s;
  for (const auto& p : paths) s += (s.empty() ? "" : ", ") + p.string();
  return s.empty() ? "(no directories: set KESTREL_RESOURCE_PATH)" : s;
}

void index(const std::shared_ptr<const Element>& e,
           std::multimap<std::pair<int, std::string>, std::shared_ptr<const Element>>& by_line) {
  by_line.emplace(std::make_pair(e->line(), e->name()), e);
  for (const auto& c : e->children()) index(c, by_line);
}

}  // namespace

std::string Sources::key_of(const std::string& file) const {
  if (files_.count(file)) return file;
  // Elements converted from URDF: the URDF file, when there is one.
  if (file == kUrdfSource && !urdf_includes_.empty()) {
    bool one = true;
    for (const auto& u : urdf_includes_) one = one && u.file == urdf_includes_.front().file;
    if (one) return urdf_includes_.front().file;
  }
  // Elements of a world libsdformat read from text carry its string source name (or none).
  if ((file.empty() || file == kStringSource) && !order_.empty()) return order_.front();
  std::error_code ec;
  auto canon = fs::weakly_canonical(fs::path(file), ec).string();
  return ec ? file : canon;
}

std::string Sources::display(const std::string& file) const {
  auto it = files_.find(key_of(file));
  return it == files_.end() ? file : it->second.display;
}

namespace {
// Same attributes (in any order), text and children, recursively: two spellings of one element.
bool same_content(const Element& a, const Element& b) {
  auto trimmed = [](const std::string& t) {
    const auto f = t.find_first_not_of(" \t\r\n");
    return f == std::string::npos ? std::string()
                                  : t.substr(f, t.find_last_not_of(" \t\r\n") - f + 1);
  };
  if (a.name() != b.name() || trimmed(a.text()) != trimmed(b.text()) ||
      a.children().size() != b.children().size()) {
    return false;
  }
  auto names = a.attribute_names(), other = b.attribute_names();
  std::sort(names.begin(), names.end());
  std::sort(other.begin(), other.end());
  if (names != other) return false;
  for (const auto& n : names) {
    if (a.attribute(n) != b.attribute(n)) return false;
  }
  for (std::size_t i = 0; i < a.children().size(); ++i) {
    if (!same_content(*a.children()[i], *b.children()[i])) return false;
  }
  return true;
}
}  // namespace

std::shared_ptr<const Element> Sources::find(const std::string& file, int line,
                                             const std::string& name, const std::string& name_attr,
                                             const std::function<std::string()>& xml) const {
  auto it = files_.find(key_of(file));
  if (it == files_.end()) return nullptr;
  auto [b, e] = it->second.by_line.equal_range({line, name});
  if (b == e) return nullptr;
  std::vector<std::shared_ptr<const Element>> named;
  for (auto m = b; m != e; ++m) {
    if (name_attr.empty() || m->second->attribute("name").value_or("") == name_attr) {
      named.push_back(m->second);
    }
  }
  if (named.empty()) return b->second;
  if (named.size() > 1 && xml) {
    std::string why = "none has the content libsdformat holds";
    try {
      const auto held = Element::parse(xml());
      for (const auto& n : named) {
        if (same_content(*n, *held)) return n;
      }
    } catch (const Error& e) {
      why = std::string("libsdformat's text of it does not parse: ") + e.what();
    }
    spdlog::warn(
        "{}:{}: {} <{}> elements named '{}' on this line and {}: the first one's text is used "
        "for each (put them on lines of their own)",
        display(file), line, named.size(), name, name_attr, why);
  }
  return named.front();
}

double Sources::dom_bytes(const std::string& file) const {
  const std::string key = key_of(file);
  if (auto m = dom_bytes_memo_.find(key); m != dom_bytes_memo_.end()) return m->second;
  auto it = files_.find(key);
  if (it == files_.end()) return 0;
  // Memoized: a file included N times by a file included M times is counted N·M times
  // without visiting it N·M times (includes are acyclic: scan refuses recursion).
  double total = it->second.own_dom_bytes;
  for (const auto& inc : it->second.includes) total += dom_bytes(inc);
  dom_bytes_memo_[key] = total;
  return total;
}

std::shared_ptr<const Element> Sources::root(const std::string& file) const {
  auto it = files_.find(key_of(file));
  return it == files_.end() ? nullptr : it->second.root;
}

void Sources::add_world_file(const fs::path& path, Findings& findings) {
  world_text_ = read_file_checked(path, max_bytes_);
  std::error_code ec;
  const std::string key = fs::weakly_canonical(path, ec).string();
  std::vector<std::string> stack;
  scan(ec ? path.string() : key, path.string(), world_text_, directory_of(path), findings, stack);
}

void Sources::add_world_string(std::string text, const std::string& name, Findings& findings) {
  if (text.size() > max_bytes_) {
    throw UnreadableWorld(name, "SDF text is " + std::to_string(text.size()) +
                                    " bytes, more than the limit of " + std::to_string(max_bytes_) +
                                    " bytes");
  }
  world_text_ = std::move(text);
  std::vector<std::string> stack;
  scan(name, name, world_text_, fs::path(), findings, stack);
}

void Sources::add_model_as_world(const fs::path& model_file, Findings& findings) {
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(fs::absolute(model_file, ec), ec);
  if (ec) throw UnreadableWorld(model_file.string(), "cannot resolve the path: " + ec.message());
  display_names_[canonical.string()] = model_file.string();
  std::string uri;
  for (char c : canonical.string()) {
    switch (c) {
      case '&':
        uri += "&amp;";
        break;
      case '<':
        uri += "&lt;";
        break;
      case '>':
        uri += "&gt;";
        break;
      default:
        uri += c;
    }
  }
  world_text_ = "<?xml version='1.0'?><sdf version='1.9'><world name='empty'><include><uri>" + uri +
                "</uri></include></world></sdf>\n";
  std::vector<std::string> stack;
  scan("<empty world for " + model_file.string() + ">", model_file.string(), world_text_,
       fs::path(), findings, stack);
}

Sources::File& Sources::add_file(const std::string& key, const std::string& display,
                                 const std::string& text) {
  File& file = files_[key];
  file.display = display;
  order_.push_back(key);
  try {
    file.root = Element::parse(text, display);
  } catch (const Error& e) {
    throw UnreadableWorld(e.what());
  }
  index(file.root, file.by_line);
  return file;
}

void Sources::scan(const std::string& key, const std::string& display, const std::string& text,
                   const fs::path& base_dir, Findings& findings, std::vector<std::string>& stack,
                   const std::string& include_name) {
  for (std::size_t i = 0; i < stack.size(); ++i) {
    if (stack[i] == key) {
      std::string chain;
      for (std::size_t j = i; j < stack.size(); ++j) chain += files_.at(stack[j]).display + " → ";
      throw UnreadableWorld(display, "recursive <include>: " + chain + display);
    }
  }
  if (files_.count(key)) {  // already scanned (included more than once): parse once
    for (std::size_t i = 0; i < urdf_includes_.size(); ++i) {
      if (urdf_includes_[i].file != key) continue;
      UrdfInclude again = urdf_includes_[i];
      again.name = include_name;
      urdf_includes_.push_back(std::move(again));
      break;
    }
    return;
  }
  throw_if_interrupted("reading " + display);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw UnreadableWorld(display, "file is empty; expected an <sdf> document");
  }
  tinyxml2::XMLDocument doc;
  if (doc.Parse(text.data(), text.size()) != tinyxml2::XML_SUCCESS) {
    throw UnreadableWorld(display + ":" + std::to_string(doc.ErrorLineNum()),
                          std::string("malformed XML: ") + doc.ErrorStr());
  }
  if (!doc.RootElement()) throw UnreadableWorld(display, "no XML element found");
  if (std::string_view(doc.RootElement()->Name()) == "robot") {
    // URDF: libsdformat converts it; what its conversion loses is reported (or, for <mimic>,
    // restored) from the URDF's own XML.
    File& file = add_file(key, display, text);
    for (auto* x = doc.RootElement()->FirstChildElement(); x; x = x->NextSiblingElement()) {
      file.own_dom_bytes += dom_weight(x->Name());
    }
    file.own_dom_bytes += dom_weight("model");
    urdf_includes_.push_back({key, include_name, read_urdf(*doc.RootElement(), display, findings)});
    return;
  }
  if (std::string_view(doc.RootElement()->Name()) != "sdf") {
    throw UnreadableWorld(display + ":" + std::to_string(doc.RootElement()->GetLineNum()),
                          std::string("expected <sdf> as the root element, found <") +
                              doc.RootElement()->Name() + ">");
  }
  // libsdformat 12 reads the version with std::stoi and lets its std::invalid_argument escape
  // ("stoi"): a version that is not numbers and dots is refused here, by file:line.
  if (const char* v = doc.RootElement()->Attribute("version"); v && *v) {
    const std::string_view version(v);
    // Each number at most 6 digits: std::stoi must not overflow on it either.
    int digits = 0;
    bool ok = std::isdigit(static_cast<unsigned char>(version.front())) != 0;
    for (const char ch : version) {
      if (std::isdigit(static_cast<unsigned char>(ch))) {
        ok = ok && ++digits <= 6;
      } else if (ch != '.' || digits == 0) {
        ok = false;
      } else {
        digits = 0;
      }
    }
    if (!ok || digits == 0) {
      throw UnreadableWorld(display + ":" + std::to_string(doc.RootElement()->GetLineNum()),
                            std::string("<sdf version='") + v +
                                "'> is not a version number (expected numbers of at most 6 digits "
                                "and dots, such as 1.9)");
    }
  }
  // libsdformat 12 renames, in files older than SDF 1.7, a joint whose name a sibling link or
  // model already has (to NAME_joint, with a warning); SDF 1.7 made it an error.
  std::string renaming_version;
  if (const char* v = doc.RootElement()->Attribute("version"); v && *v) {
    const int major = std::atoi(v);
    const char* dot = std::strchr(v, '.');
    if (major < 1 || (major == 1 && (dot ? std::atoi(dot + 1) : 0) < 7)) renaming_version = v;
  }
  File& file = add_file(key, display, text);

  stack.push_back(key);
  std::function<void(const tinyxml2::XMLElement*)> walk = [&](const tinyxml2::XMLElement* x) {
    const int line = x->GetLineNum();
    file.own_dom_bytes += dom_weight(x->Name());
    // Placeholders (`__default__`, `__x__`): reported, never taken as values.
    for (auto* a = x->FirstAttribute(); a; a = a->Next()) {
      if (is_placeholder(a->Value())) {
        findings.warning(display, line, "",
                         std::string("placeholder value '") + a->Value() + "' in attribute " +
                             a->Name() + " of <" + x->Name() +
                             ">: write the real value (tools fill these in for missing data)");
      }
    }
    if (x->GetText() && !x->FirstChildElement() && is_placeholder(x->GetText())) {
      findings.warning(display, line, "",
                       std::string("placeholder value '") + x->GetText() + "' in <" + x->Name() +
                           ">: write the real value (tools fill these in for missing data)");
    }
    // Duplicate sibling names.
    std::map<std::pair<std::string, std::string>, int> seen;
    // In a file older than SDF 1.7 joints come second, unique among themselves, and one whose
    // name a link or model has is renamed by libsdformat (a warning).
    const auto renamed = [&](const std::string& tag) {
      return !renaming_version.empty() && tag == "joint";
    };
    std::vector<const tinyxml2::XMLElement*> children;
    for (auto* c = x->FirstChildElement(); c; c = c->NextSiblingElement()) {
      if (!renamed(c->Name())) children.push_back(c);
    }
    for (auto* c = x->FirstChildElement(); c; c = c->NextSiblingElement()) {
      if (renamed(c->Name())) children.push_back(c);
    }
    for (const auto* c : children) {
      const std::string tag = c->Name();
      const char* n = c->Attribute("name");
      if (!n || !is_named_kind(tag)) continue;
      if (renamed(tag)) {
        const auto other = seen.find({"frame", n});
        if (other != seen.end() && !seen.count({tag, n})) {
          findings.warning(display, c->GetLineNum(), "",
                           "<" + tag + " name='" + n + "'> has the name of a sibling declared at " +
                               "line " + std::to_string(other->second) +
                               ": libsdformat renames it '" + n + "_" + tag +
                               "' in a file older than SDF 1.7 (this one is SDF " +
                               renaming_version + "); refer to it by that name");
          seen.emplace(std::make_pair(tag, std::string(n)), c->GetLineNum());
          continue;
        }
      }
      const std::string kind = is_frame_kind(tag) && !renamed(tag) ? "frame" : tag;
      auto [it, inserted] = seen.emplace(std::make_pair(kind, std::string(n)), c->GetLineNum());
      if (!inserted) {
        duplicates_found_ = true;
        findings.error(display, c->GetLineNum(), "",
                       "duplicate name '" + std::string(n) + "': <" + tag +
                           "> has the same name "
                           "as a sibling declared at line " +
                           std::to_string(it->second) + " in <" + x->Name() +
                           ">; names must be unique among siblings");
      }
    }
    // Includes: resolve, then scan the included file (once).
    if (std::string_view(x->Name()) == "include") {
      const auto* u = x->FirstChildElement("uri");
      const std::string uri(trim(u && u->GetText() ? u->GetText() : ""));
      if (uri.empty()) {
        findings.error(display, line, "", "<include> without a <uri>");
      } else {
        auto r = resolve_uri(uri, base_dir, search_);
        if (r.file.empty() && r.web) {
          unresolved_.insert(uri);
          findings.error(
              display, line, "",
              "cannot resolve <include> '" + uri + "': " + fuel::missing_advice(uri, r.searched));
        } else if (r.file.empty()) {
          unresolved_.insert(uri);
          std::string searched;
          for (const auto& p : r.searched) searched += (searched.empty() ? "" : ", ") + p.string();
          findings.error(display, line, "",
                         "cannot resolve <include> '" + uri +
                             "'; searched: " + (searched.empty() ? join_paths(search_) : searched) +
                             " (set KESTREL_RESOURCE_PATH or GZ_SIM_RESOURCE_PATH)");
        } else {
          const std::string sub = r.file.string();
          file.includes.push_back(sub);
          const auto named = display_names_.find(sub);
          const auto* name = x->FirstChildElement("name");
          scan(sub, named == display_names_.end() ? sub : named->second,
               read_file_checked(r.file, max_bytes_), r.file.parent_path(), findings, stack,
               std::string(trim(name && name->GetText() ? name->GetText() : "")));
        }
      }
      for (auto* c = x->FirstChildElement(); c; c = c->NextSiblingElement()) {
        static const std::set<std::string> kInclude = {"uri",    "name",   "pose",
                                                       "static", "plugin", "placement_frame"};
        if (!kInclude.count(c->Name())) {
          findings.warning(
              display, c->GetLineNum(), "",
              std::string("unsupported element <") + c->Name() + "> in <include> is ignored");
        }
      }
      return;
    }
    for (auto* c = x->FirstChildElement(); c; c = c->NextSiblingElement()) walk(c);
  };
  walk(doc.RootElement());
  stack.pop_back();
}

}  // namespace kestrel::sdf::detail

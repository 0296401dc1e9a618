#include "spec.h"

#include <map>
#include <mutex>
#include <sdf/sdf.hh>
#include <set>
#include <vector>

#include "kestrel/core/text.h"

namespace kestrel::sdf::detail {

namespace {

using Children = std::map<std::string, std::set<std::string>>;

// Every element name of the specification → the names valid inside it (the union over the
// elements of that name). Built once, on first use (~7000 element descriptions).
const Children& children() {
  static const Children table = [] {
    Children out;
    ::sdf::SDFPtr spec(new ::sdf::SDF());
    ::sdf::init(spec);
    std::set<const ::sdf::Element*> seen;
    std::vector<::sdf::ElementPtr> todo{spec->Root()};
    while (!todo.empty()) {
      const ::sdf::ElementPtr e = todo.back();
      todo.pop_back();
      if (!e || !seen.insert(e.get()).second) continue;
      auto& names = out[e->GetName()];
      for (std::size_t i = 0; i < e->GetElementDescriptionCount(); ++i) {
        const auto c = e->GetElementDescription(static_cast<unsigned>(i));
        names.insert(c->GetName());
        todo.push_back(c);
      }
    }
    return out;
  }();
  return table;
}

std::mutex& table_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

std::string misspelling_of(const std::string& parent, const std::string& child) {
  if (child.find(':') != std::string::npos) return {};
  std::vector<std::string> candidates;
  {
    std::lock_guard lock(table_mutex());  // libsdformat's init is not known to be thread-safe
    const auto& t = children();
    const auto it = t.find(parent);
    if (it == t.end() || it->second.count(child)) return {};
    candidates.assign(it->second.begin(), it->second.end());
  }
  return closest_match(child, candidates);
}

std::string misspelling_message(const std::string& parent, const std::string& child,
                                const std::string& meant) {
  return "<" + child + "> is not an element of <" + parent + ">: did you mean <" + meant +
         ">? (ignored, its default would be used instead of the value written)";
}

}  // namespace kestrel::sdf::detail

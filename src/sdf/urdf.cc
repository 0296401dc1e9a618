#include "urdf.h"

#include <tinyxml2.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

namespace kestrel::sdf::detail {

namespace {

struct Link {
  int line = 0;
  bool inertial = false;
  double mass = 0;  // 0 without <inertial>
  int mass_line = 0;
  std::string parent_joint;  // empty: a root
};

struct Joint {
  std::string type, parent, child;
  int line = 0;
};

bool moves(const std::string& type) {
  return type == "revolute" || type == "continuous" || type == "prismatic";
}

// A number attribute: `absent` when there is none, NaN when it is not a number.
double number(const tinyxml2::XMLElement* e, const char* attr, double absent) {
  const char* v = e ? e->Attribute(attr) : nullptr;
  if (!v) return absent;
  char* end = nullptr;
  const double x = std::strtod(v, &end);
  return end != v && *end == '\0' ? x : std::nan("");
}

std::string list(const std::vector<std::string>& names) {
  std::string s;
  for (std::size_t i = 0; i < names.size() && i < 8; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > 8) s += ", ...";
  return s;
}

}  // namespace

UrdfRobot read_urdf(const tinyxml2::XMLElement& robot, const std::string& display,
                    Findings& findings) {
  UrdfRobot out;
  out.name = robot.Attribute("name") ? robot.Attribute("name") : "";
  // Findings name the entity as the converted model will have it.
  const auto who = [&](const std::string& x) { return out.name + "::" + x; };
  std::map<std::string, Link> links;
  std::vector<std::string> link_order;
  std::map<std::string, Joint> joints;
  for (auto* l = robot.FirstChildElement("link"); l; l = l->NextSiblingElement("link")) {
    const char* n = l->Attribute("name");
    if (!n) continue;  // libsdformat's URDF parser refuses it
    Link& link = links[n];
    link_order.push_back(n);
    link.line = l->GetLineNum();
    if (auto* in = l->FirstChildElement("inertial")) {
      link.inertial = true;
      const auto* m = in->FirstChildElement("mass");
      link.mass_line = m ? m->GetLineNum() : in->GetLineNum();
      link.mass = number(m, "value", std::nan(""));
      if (!std::isfinite(link.mass) || link.mass < 0) {
        findings.error(display, link.mass_line, who(n),
                       std::string("link '") + n +
                           "': <mass value> must be a number >= 0, found '" +
                           (m && m->Attribute("value") ? m->Attribute("value") : "") + "'");
        link.mass = 0;
      }
    }
  }
  for (auto* j = robot.FirstChildElement("joint"); j; j = j->NextSiblingElement("joint")) {
    const char* n = j->Attribute("name");
    if (!n) continue;
    Joint& joint = joints[n];
    joint.type = j->Attribute("type") ? j->Attribute("type") : "";
    joint.line = j->GetLineNum();
    if (auto* p = j->FirstChildElement("parent"); p && p->Attribute("link")) {
      joint.parent = p->Attribute("link");
    }
    if (auto* c = j->FirstChildElement("child"); c && c->Attribute("link")) {
      joint.child = c->Attribute("link");
      if (auto it = links.find(joint.child); it != links.end()) it->second.parent_joint = n;
    }
    // effort="0": libsdformat writes <effort>0</effort>, which clamps every command to zero.
    if (auto* lim = j->FirstChildElement("limit"); lim && moves(joint.type)) {
      if (number(lim, "effort", -1) == 0) {
        findings.warning(display, lim->GetLineNum(), who(n),
                         std::string("joint '") + n +
                             "' has <limit effort=\"0\">: it becomes SDF <effort>0</effort>, so "
                             "every force, velocity or position command on it is clamped to "
                             "zero and nothing can drive it (a passive joint may keep it; a "
                             "driven one needs its actuator's effort)");
      }
    }
    if (auto* m = j->FirstChildElement("mimic")) {
      UrdfMimic mimic;
      mimic.follower = n;
      mimic.leader = m->Attribute("joint") ? m->Attribute("joint") : "";
      mimic.multiplier = number(m, "multiplier", 1);
      mimic.offset = number(m, "offset", 0);
      mimic.line = m->GetLineNum();
      out.mimics.push_back(mimic);
    }
  }
  // <mimic>: libsdformat 12's conversion drops it; Kestrel makes it a joint equality constraint.
  std::vector<UrdfMimic> kept;
  for (const auto& m : out.mimics) {
    const std::string what = "<mimic joint='" + m.leader + "'> of joint '" + m.follower + "'";
    const auto leader = joints.find(m.leader);
    if (m.leader.empty()) {
      findings.error(display, m.line, who(m.follower),
                     "<mimic> of joint '" + m.follower + "' has no joint attribute (the leader)");
    } else if (leader == joints.end()) {
      findings.error(display, m.line, who(m.follower),
                     what + ": the robot has no joint '" + m.leader + "'");
    } else if (!moves(joints[m.follower].type) || !moves(leader->second.type)) {
      findings.error(display, m.line, who(m.follower),
                     what + ": only revolute, continuous and prismatic joints follow or lead ('" +
                         m.follower + "' is " + joints[m.follower].type + ", '" + m.leader +
                         "' is " + leader->second.type + ")");
    } else if (m.leader == m.follower) {
      findings.error(display, m.line, who(m.follower), what + ": a joint cannot follow itself");
    } else if (!std::isfinite(m.multiplier) || !std::isfinite(m.offset)) {
      findings.error(display, m.line, who(m.follower),
                     what + ": multiplier and offset must be finite numbers");
    } else {
      kept.push_back(m);
    }
  }
  out.mimics = std::move(kept);

  // Bodies: libsdformat lumps a link into its parent across a fixed joint (not into "world"),
  // then leaves out every body without mass, with all that hangs below it.
  // (At most one step per link: a cycle, which libsdformat refuses, cannot loop here.)
  const auto body_of = [&](std::string name) {
    for (std::size_t steps = 0; steps < links.size(); ++steps) {
      const Link& l = links[name];
      if (l.parent_joint.empty()) break;
      const Joint& j = joints[l.parent_joint];
      if (j.type != "fixed" || j.parent == "world" || !links.count(j.parent)) break;
      name = j.parent;
    }
    return name;
  };
  std::map<std::string, double> body_mass;
  std::map<std::string, std::vector<std::string>> body_links;
  for (const auto& n : link_order) {
    body_mass[body_of(n)] += links[n].mass;
    body_links[body_of(n)].push_back(n);
  }
  // The links below one, each once (a cycle cannot loop).
  const auto below = [&](const std::string& top, std::vector<std::string>& acc) {
    std::set<std::string> seen{top};
    std::vector<std::string> todo{top};
    while (!todo.empty()) {
      const std::string name = todo.back();
      todo.pop_back();
      for (const auto& kv : joints) {
        const Joint& j = kv.second;
        if (j.parent == name && links.count(j.child) && seen.insert(j.child).second) {
          acc.push_back(j.child);
          todo.push_back(j.child);
        }
      }
    }
  };
  // Massless bodies; each is reported once, at the topmost (those below go with it).
  std::vector<std::string> massless;
  std::set<std::string> below_massless;
  for (const auto& n : link_order) {
    if (body_of(n) != n || n == "world" || body_mass[n] > 0) continue;
    massless.push_back(n);
    std::vector<std::string> lost;
    for (const auto& m : body_links[n]) below(m, lost);
    for (const auto& m : lost) {
      if (body_of(m) != n) below_massless.insert(m);
    }
  }
  for (const auto& n : massless) {
    if (below_massless.count(n)) continue;
    const std::string& b = n;
    std::vector<std::string> lost;
    for (const auto& m : body_links[b]) below(m, lost);
    std::set<std::string> once;
    std::vector<std::string> under;
    for (const auto& m : lost) {
      if (body_of(m) != b && once.insert(m).second) under.push_back(m);
    }
    const Link& l = links[n];
    std::vector<std::string> lumped;
    for (const auto& m : body_links[b]) {
      if (m != n) lumped.push_back(m);
    }
    const std::string why =
        (l.inertial ? "mass 0" : "no <inertial>") +
        (lumped.empty() ? std::string() : " (nor the links fixed to it: " + list(lumped) + ")");
    const std::string rest = under.empty() ? std::string()
                                           : " and the " + std::to_string(under.size()) + " link" +
                                                 (under.size() == 1 ? "" : "s") + " below it (" +
                                                 list(under) + ")";
    const std::string fix = "; give it an <inertial> with a positive <mass>";
    if (l.parent_joint.empty()) {
      findings.error(display, l.inertial ? l.mass_line : l.line, who(n),
                     "root link '" + n + "' has " + why +
                         ": libsdformat's URDF conversion leaves it out" + rest +
                         " (a massless root takes its whole tree with it)" + fix);
    } else {
      findings.error(display, l.inertial ? l.mass_line : l.line, who(n),
                     "link '" + n + "' has " + why +
                         ": libsdformat's URDF conversion leaves it out with its joint '" +
                         l.parent_joint + "'" + rest + fix);
    }
  }
  return out;
}

}  // namespace kestrel::sdf::detail

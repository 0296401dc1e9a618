#include "kestrel/ecs/registry.h"

#include <map>

namespace kestrel::ecs {

using components::Name;
using components::ParentEntity;

// One byte of flags per entity id, in pages allocated on demand and freed when empty.
struct Registry::AliveIndex {
  static constexpr int kShift = 14;
  static constexpr Entity kMask = (Entity{1} << kShift) - 1;
  enum : std::uint8_t { kAlive = 1, kRemoving = 2 };
  struct Page {
    std::uint8_t flags[std::size_t{1} << kShift] = {};
    std::uint32_t used = 0;
  };
  std::vector<std::unique_ptr<Page>> pages;

  std::uint8_t get(Entity e) const {
    const auto p = static_cast<std::size_t>(e >> kShift);
    return p < pages.size() && pages[p] ? pages[p]->flags[e & kMask] : 0;
  }
  void set(Entity e, std::uint8_t f) {
    const auto p = static_cast<std::size_t>(e >> kShift);
    if (p >= pages.size()) pages.resize(p + 1);
    if (!pages[p]) pages[p] = std::make_unique<Page>();
    auto& slot = pages[p]->flags[e & kMask];
    if (slot == 0 && f != 0) ++pages[p]->used;
    if (slot != 0 && f == 0 && --pages[p]->used == 0) {
      pages[p].reset();
      return;
    }
    slot = f;
  }
};

bool Registry::aligned(const PoolBase& p, const PoolBase& driver) const {
  if (&p == &driver) return true;
  std::lock_guard lock(align_mutex_);
  auto& c = align_cache_[{&p, &driver}];
  if (c.gen_p != p.layout_generation() || c.gen_driver != driver.layout_generation()) {
    c.gen_p = p.layout_generation();
    c.gen_driver = driver.layout_generation();
    c.aligned = p.same_slots(driver, 0, driver.slots());
  }
  return c.aligned;
}

Registry::Registry()
    : alive_(std::make_unique<AliveIndex>()), hub_(std::make_unique<detail::PoolHub>()) {}
Registry::~Registry() = default;

Entity Registry::create(Entity parent) {
  if (parent != kNullEntity) check_alive(parent, "a child");
  const Entity e = next_id_++;
  alive_->set(e, AliveIndex::kAlive);
  ++alive_count_;
  new_.push_back(e);
  if (parent != kNullEntity) {
    pool<ParentEntity>().emplace(e, ParentEntity{parent});
    children_[parent].push_back(e);
  }
  return e;
}

bool Registry::alive(Entity e) const { return alive_->get(e) & AliveIndex::kAlive; }

bool Registry::removal_pending(Entity e) const { return alive_->get(e) & AliveIndex::kRemoving; }

void Registry::check_alive(Entity e, std::string_view what) const {
  if (!alive(e)) {
    throw Error("entity " + std::to_string(e) + " does not exist (while adding " +
                std::string(what) + ")");
  }
}

void Registry::collect(Entity e, bool recursive, std::vector<Entity>& out) const {
  out.push_back(e);
  if (!recursive) return;
  for (Entity c : children(e)) collect(c, true, out);
}

void Registry::request_remove(Entity e, bool recursive) {
  if (!alive(e)) throw Error("cannot remove entity " + std::to_string(e) + ": it does not exist");
  std::vector<Entity> all;
  collect(e, recursive, all);
  for (Entity x : all) {
    const auto f = alive_->get(x);
    if (f & AliveIndex::kRemoving) continue;
    alive_->set(x, f | AliveIndex::kRemoving);
    removing_.push_back(x);
  }
}

void Registry::destroy(Entity e) {
  for (auto& p : pools_)
    if (p) p->remove(e);
  children_.erase(e);
  alive_->set(e, 0);
  --alive_count_;
}

void Registry::compact_all() {
  // Only pools that listed themselves (a mark or a removal since the last call); most steps
  // touch few of them.
  for (PoolBase* p : hub_->dirty) {
    p->unlist();
    if (p->dirty()) p->compact();
  }
  hub_->dirty.clear();
}

// Detaches dead entities from their parents' child lists in one pass per parent.
static void prune_children(std::unordered_map<Entity, std::vector<Entity>>& children,
                           const std::vector<Entity>& parents,
                           const std::function<bool(Entity)>& alive) {
  for (Entity p : parents) {
    auto it = children.find(p);
    if (it == children.end()) continue;
    std::erase_if(it->second, [&](Entity c) { return !alive(c); });
    if (it->second.empty()) children.erase(it);
  }
}

void Registry::remove_now(Entity e, bool recursive) {
  if (!alive(e)) throw Error("cannot remove entity " + std::to_string(e) + ": it does not exist");
  const Entity p = parent(e);
  std::vector<Entity> all;
  collect(e, recursive, all);
  if (!recursive) {
    // Orphaned children become roots.
    for (Entity c : children(e)) pool<ParentEntity>().remove(c);
  }
  for (Entity x : all) destroy(x);
  std::erase_if(removing_, [&](Entity x) { return !alive(x); });
  prune_children(children_, {p}, [&](Entity c) { return alive(c); });
  compact_all();
}

std::vector<Entity> Registry::entities() const {
  std::vector<Entity> out;
  out.reserve(alive_count_);
  for (std::size_t p = 0; p < alive_->pages.size(); ++p) {
    if (!alive_->pages[p]) continue;
    for (Entity i = 0; i <= AliveIndex::kMask; ++i) {
      if (alive_->pages[p]->flags[i] & AliveIndex::kAlive) {
        out.push_back((Entity{p} << AliveIndex::kShift) | i);
      }
    }
  }
  return out;
}

void Registry::end_step() {
  if (!removing_.empty()) {
    std::vector<Entity> parents;
    for (Entity e : removing_) {
      if (!alive(e)) continue;
      const Entity p = parent(e);
      if (p != kNullEntity) parents.push_back(p);
      if (children_.count(e)) {
        // Children not being removed (non-recursive removal) become roots.
        for (Entity c : children_[e])
          if (!removal_pending(c)) pool<ParentEntity>().remove(c);
      }
      destroy(e);
    }
    prune_children(children_, parents, [&](Entity c) { return alive(c); });
    removing_.clear();
  }
  new_.clear();
  compact_all();
}

Entity Registry::parent(Entity e) const {
  const auto* p = try_get<ParentEntity>(e);
  return p ? p->value : kNullEntity;
}

void Registry::set_parent(Entity e, Entity new_parent) {
  check_alive(e, "a parent");
  if (new_parent != kNullEntity) {
    check_alive(new_parent, "a parent");
    for (Entity a = new_parent; a != kNullEntity; a = parent(a)) {
      if (a == e) {
        throw Error("cannot make " + describe(new_parent) + " the parent of " + describe(e) +
                    ": that would make a cycle");
      }
    }
  }
  const Entity old = parent(e);
  if (old == new_parent) return;
  if (old != kNullEntity) {
    auto& list = children_[old];
    std::erase(list, e);
    if (list.empty()) children_.erase(old);
  }
  auto& pp = pool<ParentEntity>();
  if (new_parent == kNullEntity) {
    pp.remove(e);
    return;
  }
  children_[new_parent].push_back(e);
  if (auto* c = try_get<ParentEntity>(e)) {
    c->value = new_parent;
    pp.mark(e, ComponentState::kOneTime);
  } else {
    pp.emplace(e, ParentEntity{new_parent});
  }
}

std::span<const Entity> Registry::children(Entity e) const {
  auto it = children_.find(e);
  return it == children_.end() ? std::span<const Entity>{} : std::span<const Entity>(it->second);
}

std::vector<Entity> Registry::descendants(Entity e) const {
  std::vector<Entity> out;
  collect(e, true, out);
  out.erase(out.begin());
  return out;
}

Entity Registry::child_by_name(Entity parent_entity, std::string_view name) const {
  if (parent_entity != kNullEntity) {
    for (Entity c : children(parent_entity)) {
      const auto* n = try_get<Name>(c);
      if (n && n->value == name) return c;
    }
    return kNullEntity;
  }
  Entity found = kNullEntity;
  each<Name>([&](Entity e, const Name& n) {
    if (n.value == name && parent(e) == kNullEntity) {
      found = e;
      return false;
    }
    return true;
  });
  return found;
}

std::string Registry::scoped_name(Entity e) const {
  std::vector<std::string> parts;
  for (Entity a = e; a != kNullEntity; a = parent(a)) {
    const auto* n = try_get<Name>(a);
    if (n) {
      parts.push_back(n->value);
    } else {
      parts.push_back(std::to_string(a));
      parts.back().insert(0, 1, '#');  // not "#" + ...: GCC 12 -O3 -Wrestrict false positive
    }
  }
  std::string out;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (!out.empty()) out += "::";
    out += *it;
  }
  return out;
}

Entity Registry::find_scoped(std::string_view scoped) const {
  Entity cur = kNullEntity;
  while (true) {
    const auto sep = scoped.find("::");
    cur = child_by_name(cur, scoped.substr(0, sep));
    if (cur == kNullEntity || sep == std::string_view::npos) return cur;
    scoped.remove_prefix(sep + 2);
  }
}

std::string Registry::describe(Entity e) const {
  std::string s = "entity " + std::to_string(e);
  if (alive(e)) s += " '" + scoped_name(e) + "'";
  return s;
}

Error Registry::missing(Entity e, std::string_view type) const {
  if (!alive(e)) {
    return Error("entity " + std::to_string(e) + " does not exist (asked for component " +
                 std::string(type) + ")");
  }
  return Error(describe(e) + " has no component " + std::string(type));
}

Snapshot Registry::snapshot() const {
  KESTREL_DEMAND(removing_.empty());
  Snapshot s;
  s.entities_ = entities();
  s.children_ = children_;
  s.pools_.resize(pools_.size());
  for (std::size_t i = 0; i < pools_.size(); ++i) {
    if (pools_[i] && pools_[i]->size() != 0) s.pools_[i] = pools_[i]->snapshot();
  }
  return s;
}

void Registry::restore(const Snapshot& s) {
  // Entities: exactly the snapshot's set, with their ids.
  for (Entity e : entities()) alive_->set(e, 0);
  for (Entity e : s.entities_) alive_->set(e, AliveIndex::kAlive);
  alive_count_ = s.entities_.size();
  children_ = s.children_;
  new_.clear();
  removing_.clear();
  for (std::size_t i = 0; i < pools_.size(); ++i) {
    if (!pools_[i]) continue;
    if (i < s.pools_.size() && s.pools_[i]) {
      pools_[i]->restore(s.pools_[i].get());
    } else {
      pools_[i]->clear();
    }
  }
}

void Registry::serialize(Entity e,
                         const std::function<void(std::string_view, std::string_view)>& fn) const {
  std::map<std::string_view, const PoolBase*> by_name;
  for (const auto& p : pools_) {
    if (p && !p->serial_name().empty() && p->contains(e)) by_name[p->serial_name()] = p.get();
  }
  std::string bytes;
  for (const auto& [name, p] : by_name) {
    bytes.clear();
    p->serialize(e, bytes);
    fn(name, bytes);
  }
}

void Registry::deserialize(Entity e, std::string_view stable_name, std::string_view bytes) {
  check_alive(e, std::string(stable_name));
  for (auto& p : pools_) {
    if (p && p->serial_name() == stable_name) {
      p->deserialize(e, bytes);
      return;
    }
  }
  throw Error("no component type with serial name '" + std::string(stable_name) +
              "' is registered (call register_serializable<T>() first)");
}

void Registry::copy_components(Entity from, Entity to) {
  check_alive(from, "copy_components (source)");
  check_alive(to, "copy_components (target)");
  const std::size_t parent_index = detail::type_index<ParentEntity>();
  for (std::size_t i = 0; i < pools_.size(); ++i) {
    if (i == parent_index || !pools_[i]) continue;
    pools_[i]->copy(from, to);
  }
}

}  // namespace kestrel::ecs

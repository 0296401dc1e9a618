#pragma once
/// @file The Registry: Kestrel's entity-component manager (Gazebo's EntityComponentManager).
///
/// ## Reference validity (the exact rule)
/// - Component pages never move: a `T&` obtained from add/get/each stays valid while any other
///   components or entities are added, and while components or entities are removed, **until the
///   end of the step** (Registry::end_step), which is where removals are carried out.
/// - Removing a component makes it invisible at once (has() false, get() throws, views skip it),
///   but its storage lives until end_step, so a reference held during the step stays readable.
/// - end_step() invalidates references into every pool that had a removal that step;
///   remove_now() invalidates references into every pool it touched, immediately.
/// - restore() keeps references valid into pools whose live entities are the same, in the same
///   order, as in the snapshot (the usual case: reset without spawns/removals since the
///   snapshot); any other pool is rebuilt and its references are invalidated.
/// - Across steps, systems keep entity ids, never references.
///
/// ## Iteration
/// each<Cs...> drives the smallest pool in slot order (insertion order; removals compact stably),
/// so the order is deterministic for a deterministic program. Entities/components added during
/// iteration are not visited by that iteration; components removed during it are skipped if
/// not yet visited. Entity removal is deferred: request_remove()d entities stay visible until
/// end_step (each_removed lists them).
///
/// Components must be copyable (snapshot/restore copies them).

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kestrel/core/error.h"
#include "kestrel/ecs/entity.h"
#include "kestrel/ecs/pool.h"

namespace kestrel::ecs {

class Registry;

/// A copy of a whole registry's state (entities, graph, every component). Exact: restore()
/// gives back bit-identical component values and the same iteration order.
class Snapshot {
 public:
  std::size_t entity_count() const { return entities_.size(); }

 private:
  friend class Registry;
  std::vector<Entity> entities_;  // ascending
  std::unordered_map<Entity, std::vector<Entity>> children_;
  std::vector<std::unique_ptr<PoolSnapshot>> pools_;  // by type index; null = empty/absent
};

class Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // ---- entities ---------------------------------------------------------------------------

  /// Creates an entity, optionally under a parent (which must be alive). New entities are listed
  /// by each_new until end_step.
  Entity create(Entity parent = kNullEntity);
  /// True from create() until the entity is actually removed (end_step or remove_now).
  bool alive(Entity e) const;
  /// Number of alive entities.
  std::size_t size() const { return alive_count_; }
  /// Deferred removal (Gazebo's RequestRemoveEntity): the entity and, if recursive, all its
  /// descendants stay visible until end_step, and each_removed lists them meanwhile.
  /// @throws Error if e is not alive.
  void request_remove(Entity e, bool recursive = true);
  /// True if request_remove() has marked e this step.
  bool removal_pending(Entity e) const;
  /// Immediate removal for setup code (not inside a view or a step): removes e (and its
  /// descendants if recursive) now. Invalidates references into the pools it touched.
  void remove_now(Entity e, bool recursive = true);
  /// All alive entities in ascending id order.
  std::vector<Entity> entities() const;

  // ---- components -------------------------------------------------------------------------

  /// Adds a component. @throws Error if e is not alive or already has a T (use set/replace).
  template <class T, class... Args>
  T& add(Entity e, Args&&... args) {
    static_assert(!std::is_same_v<T, components::ParentEntity>, "use create(parent)/set_parent");
    check_alive(e, type_name<T>());
    auto& p = pool<T>();
    if (p.contains(e)) {
      throw Error(describe(e) + ": already has component " + std::string(type_name<T>()) +
                  " (use set or replace)");
    }
    T& c = p.emplace(e, std::forward<Args>(args)...);
    return c;
  }

  /// Replaces an existing component's value and marks it changed.
  /// @throws Error if e has no T.
  template <class T>
  T& replace(Entity e, T value, ComponentState s = ComponentState::kOneTime) {
    static_assert(!std::is_same_v<T, components::ParentEntity>, "use set_parent");
    T& c = get<T>(e);
    c = std::move(value);
    pool<T>().mark(e, s);
    return c;
  }

  /// Adds or replaces; marks the component changed if it existed.
  template <class T>
  T& set(Entity e, T value, ComponentState s = ComponentState::kOneTime) {
    if (T* c = try_get<T>(e)) {
      *c = std::move(value);
      pool<T>().mark(e, s);
      return *c;
    }
    return add<T>(e, std::move(value));
  }

  /// Removes e's T. Returns false if it had none. The storage lives until end_step.
  template <class T>
  bool remove(Entity e) {
    static_assert(!std::is_same_v<T, components::ParentEntity>, "use set_parent");
    auto* p = find_pool<T>();
    return p && p->remove(e);
  }

  /// @throws Error naming the entity and the component if e has no T.
  template <class T>
  T& get(Entity e) {
    if (T* c = try_get<T>(e)) return *c;
    throw missing(e, type_name<T>());
  }
  template <class T>
  const T& get(Entity e) const {
    if (const T* c = try_get<T>(e)) return *c;
    throw missing(e, type_name<T>());
  }

  /// The component, or nullptr.
  template <class T>
  T* try_get(Entity e) {
    auto* p = find_pool<T>();
    if (!p) return nullptr;
    const auto slot = p->slot_of(e);
    return slot == detail::kNoSlot ? nullptr : &p->at(slot);
  }
  template <class T>
  const T* try_get(Entity e) const {
    return const_cast<Registry*>(this)->try_get<T>(e);
  }

  /// True if e has every one of Ts.
  template <class... Ts>
  bool has(Entity e) const {
    return (has_one<Ts>(e) && ...);
  }

  /// Copies every component of `from` that `to` does not have yet (ParentEntity excepted: the
  /// graph is set by create/set_parent). Component values are copied as they are: entity ids
  /// inside them (JointData::parent...) still refer to `from`'s neighbours. Used to clone
  /// models. @throws Error if either entity is not alive.
  void copy_components(Entity from, Entity to);

  /// Number of entities that have a T.
  template <class T>
  std::size_t count() const {
    auto* p = find_pool<T>();
    return p ? p->size() : 0;
  }

  /// Advances whenever the slots of any component pool change: a component added or removed,
  /// compaction of removed ones, a clear, a restore that had to rebuild a pool. While it stands
  /// still, pointers from get/try_get stay valid and keep pointing at the same entities'
  /// components, so a system may keep them across steps (Physics does).
  std::uint64_t layout_epoch() const { return hub_->epoch; }

  // ---- change tracking (cleared by end_step) ------------------------------------------------

  /// Marks e's T as changed this step. A one-time mark is never downgraded to periodic.
  template <class T>
  void mark_changed(Entity e, ComponentState s = ComponentState::kOneTime) {
    auto* p = find_pool<T>();
    if (!p || !p->contains(e)) throw missing(e, type_name<T>());
    p->mark(e, s);
  }
  template <class T>
  ComponentState changed_state(Entity e) const {
    auto* p = find_pool<T>();
    return p ? p->state(e) : ComponentState::kNoChange;
  }
  /// Entities whose T was removed this step (by remove<T>, not by entity removal).
  template <class T>
  std::span<const Entity> removed_components() const {
    auto* p = find_pool<T>();
    return p ? std::span<const Entity>(p->removed()) : std::span<const Entity>{};
  }

  // ---- views ------------------------------------------------------------------------------

  /// Calls fn(Entity, Cs&...) for every entity that has all Cs. fn may return bool: false stops.
  template <class... Cs, class Fn>
  void each(Fn&& fn) {
    each_impl<Cs...>(*this, fn);
  }
  template <class... Cs, class Fn>
  void each(Fn&& fn) const {
    each_impl<const Cs...>(*this, fn);
  }

  /// Like each, over entities created since the last end_step.
  template <class... Cs, class Fn>
  void each_new(Fn&& fn) {
    each_listed<Cs...>(*this, new_, fn);
  }
  template <class... Cs, class Fn>
  void each_new(Fn&& fn) const {
    each_listed<const Cs...>(*this, new_, fn);
  }

  /// Like each, over entities whose removal is pending (request_remove this step).
  template <class... Cs, class Fn>
  void each_removed(Fn&& fn) {
    each_listed<Cs...>(*this, removing_, fn);
  }
  template <class... Cs, class Fn>
  void each_removed(Fn&& fn) const {
    each_listed<const Cs...>(*this, removing_, fn);
  }

  /// Like each<C, Cs...>, over entities whose C (the first type) was marked changed this step,
  /// in the order of their first mark.
  template <class C, class... Cs, class Fn>
  void each_changed(Fn&& fn) {
    auto* p = find_pool<C>();
    if (p) each_listed<C, Cs...>(*this, p->changed(), fn);
  }
  template <class C, class... Cs, class Fn>
  void each_changed(Fn&& fn) const {
    auto* p = find_pool<C>();
    if (p) each_listed<const C, const Cs...>(*this, p->changed(), fn);
  }

  // ---- graph ------------------------------------------------------------------------------

  /// The parent, or kNullEntity for a root.
  Entity parent(Entity e) const;
  /// Re-parents e (kNullEntity makes it a root). @throws Error on a cycle or a dead entity.
  void set_parent(Entity e, Entity parent);
  /// Direct children in the order they were attached.
  std::span<const Entity> children(Entity e) const;
  /// All descendants, depth-first pre-order (excluding e).
  std::vector<Entity> descendants(Entity e) const;
  /// The child of `parent` named `name`, or kNullEntity (parent kNullEntity: among roots).
  Entity child_by_name(Entity parent, std::string_view name) const;
  /// "world::model::link" from the Name components up the graph ("#42" for an unnamed entity).
  std::string scoped_name(Entity e) const;
  /// The entity for a scoped name ("world::model::link"), or kNullEntity.
  Entity find_scoped(std::string_view scoped) const;

  // ---- step boundary, snapshot, serialization ----------------------------------------------

  /// Carries out pending removals (entities then components), compacts pools, clears change
  /// marks and the new/removed lists. Called by the Runner once per step.
  void end_step();

  /// Exact copy of the state. @pre no removal is pending (call between steps).
  Snapshot snapshot() const;
  /// Returns to a snapshot: entities created since are removed, removed ones come back with
  /// their ids, all component values are restored. Change marks are cleared.
  void restore(const Snapshot& s);

  /// Calls fn(stable_name, bytes) for each of e's components that has a ComponentSerializer,
  /// in a fixed order (by stable name).
  void serialize(Entity e, const std::function<void(std::string_view, std::string_view)>& fn) const;
  /// Sets e's component from bytes. @throws Error if no registered type has that stable name.
  void deserialize(Entity e, std::string_view stable_name, std::string_view bytes);
  /// Makes T known to deserialize() before any T was added.
  template <class T>
  void register_serializable() {
    static_assert(Serializable<T>);
    (void)pool<T>();
  }

  /// "entity 12 'world::box'" — for error messages.
  std::string describe(Entity e) const;

 private:
  template <class T>
  Pool<T>* find_pool() const {
    const std::size_t i = detail::type_index<T>();
    return i < pools_.size() ? static_cast<Pool<T>*>(pools_[i].get()) : nullptr;
  }
  template <class T>
  Pool<T>& pool() {
    const std::size_t i = detail::type_index<T>();
    if (i >= pools_.size()) pools_.resize(i + 1);
    if (!pools_[i]) {
      pools_[i] = std::make_unique<Pool<T>>();
      pools_[i]->attach(hub_.get());
    }
    return static_cast<Pool<T>&>(*pools_[i]);
  }
  template <class T>
  bool has_one(Entity e) const {
    auto* p = find_pool<T>();
    return p && p->contains(e);
  }

  template <class Fn, class... Refs>
  static bool invoke(Fn& fn, Entity e, Refs&... refs) {
    if constexpr (std::is_same_v<std::invoke_result_t<Fn&, Entity, Refs&...>, bool>) {
      return fn(e, refs...);
    } else {
      fn(e, refs...);
      return true;
    }
  }

  template <class... Cs, class Self, class Fn>
  static void each_impl(Self& self, Fn& fn) {
    static_assert(sizeof...(Cs) > 0, "each needs at least one component type");
    each_impl<Cs...>(self, fn, std::index_sequence_for<Cs...>{});
  }
  template <class... Cs, class Self, class Fn, std::size_t... I>
  static void each_impl(Self& self, Fn& fn, std::index_sequence<I...>) {
    const auto pools = std::make_tuple(self.template find_pool<std::remove_const_t<Cs>>()...);
    PoolBase* driver = nullptr;
    for (PoolBase* b : {static_cast<PoolBase*>(std::get<I>(pools))...}) {
      if (!b) return;
      if (!driver || b->size() < driver->size()) driver = b;
    }
    constexpr std::size_t kBlock = detail::kPoolPage;
    const std::size_t n = driver->slots();  // additions during the loop are not visited
    const bool all_aligned = (self.aligned(*std::get<I>(pools), *driver) && ...);
    for (std::size_t base = 0; base < n; base += kBlock) {
      const std::size_t end = std::min(n, base + kBlock);
      // Fast path: every pool holds the same entities in the same slots for this block (pools
      // filled in the same order), so components are read straight from their pages. Any
      // removal during the block (a tombstone count change) drops back to per-entity lookups.
      const bool aligned =
          all_aligned || (std::get<I>(pools)->same_slots(*driver, base, end) && ...);
      const std::array<std::size_t, sizeof...(Cs)> tomb0{std::get<I>(pools)->tombstones()...};
      const auto page = base / kBlock;
      const auto data = std::make_tuple(aligned ? std::get<I>(pools)->page(page) : nullptr...);
      for (std::size_t i = base; i < end; ++i) {
        const Entity e = driver->entity_at(i);
        if (e & detail::kTombstone) continue;
        if (aligned && ((std::get<I>(pools)->tombstones() == tomb0[I]) && ...)) {
          if (!invoke(fn, e, static_cast<Cs&>(std::get<I>(data)[i - base])...)) return;
          continue;
        }
        const std::array<std::uint32_t, sizeof...(Cs)> slots{std::get<I>(pools)->slot_of(e)...};
        if (((slots[I] == detail::kNoSlot) || ...)) continue;
        if (!invoke(fn, e, static_cast<Cs&>(std::get<I>(pools)->at(slots[I]))...)) return;
      }
    }
  }

  template <class... Cs, class Self, class Fn>
  static void each_listed(Self& self, const std::vector<Entity>& list, Fn& fn) {
    if (list.empty()) return;  // the common case: nothing created or removed this step
    each_listed<Cs...>(self, list, fn, std::index_sequence_for<Cs...>{});
  }
  template <class... Cs, class Self, class Fn, std::size_t... I>
  static void each_listed(Self& self, const std::vector<Entity>& list, Fn& fn,
                          std::index_sequence<I...>) {
    [[maybe_unused]] const auto pools = std::make_tuple(self.template find_pool<std::remove_const_t<Cs>>()...);
    if (((std::get<I>(pools) == nullptr) || ...)) return;
    const std::size_t n = list.size();  // index loop: the list may grow; additions not visited
    for (std::size_t i = 0; i < n; ++i) {
      const Entity e = list[i];
      [[maybe_unused]] const std::array<std::uint32_t, sizeof...(Cs)> slots{std::get<I>(pools)->slot_of(e)...};
      if (((slots[I] == detail::kNoSlot) || ...)) continue;
      if (!invoke(fn, e, static_cast<Cs&>(std::get<I>(pools)->at(slots[I]))...)) return;
    }
  }

  // True if `p` holds the same entities in the same slots as `driver` over all of driver's
  // slots, cached per pool pair until either layout changes (so steady-state views skip the
  // comparison). Thread-safe (const views may run in parallel PostUpdate).
  bool aligned(const PoolBase& p, const PoolBase& driver) const;
  struct AlignEntry {
    std::uint64_t gen_p = ~0ull, gen_driver = ~0ull;
    bool aligned = false;
  };
  mutable std::mutex align_mutex_;
  mutable std::map<std::pair<const PoolBase*, const PoolBase*>, AlignEntry> align_cache_;

  void check_alive(Entity e, std::string_view what) const;
  Error missing(Entity e, std::string_view type) const;
  void destroy(Entity e);  // removes all components and graph links; no compaction
  void compact_all();
  void collect(Entity e, bool recursive, std::vector<Entity>& out) const;

  struct AliveIndex;  // paged flags per entity id
  std::unique_ptr<AliveIndex> alive_;
  Entity next_id_ = 1;
  std::size_t alive_count_ = 0;
  // Declared before pools_: pools touch it until they are destroyed.
  std::unique_ptr<detail::PoolHub> hub_;           // shared with every pool (heap: stable address)
  std::vector<std::unique_ptr<PoolBase>> pools_;  // by detail::type_index
  std::unordered_map<Entity, std::vector<Entity>> children_;  // only entities with children
  std::vector<Entity> new_;
  std::vector<Entity> removing_;
};

}  // namespace kestrel::ecs

#include "kestrel/ecs/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

namespace kestrel::ecs {
namespace {

using components::Name;
using components::ParentEntity;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct A {
  int v = 0;
};
struct B {
  double v = 0;
};
struct C {
  std::string s;
};

TEST(Registry, IdsStartAtOneAndAreNeverReused) {
  Registry r;
  const Entity a = r.create();
  EXPECT_EQ(a, 1u);
  EXPECT_NE(a, kNullEntity);
  r.remove_now(a);
  const Entity b = r.create();
  EXPECT_EQ(b, 2u);
  EXPECT_FALSE(r.alive(a));
  EXPECT_TRUE(r.alive(b));
  EXPECT_EQ(r.size(), 1u);
}

TEST(Registry, AddGetTryGetHasRemove) {
  Registry r;
  const Entity e = r.create();
  r.add<A>(e, 5);
  EXPECT_TRUE(r.has<A>(e));
  EXPECT_FALSE((r.has<A, B>(e)));
  EXPECT_EQ(r.get<A>(e).v, 5);
  EXPECT_EQ(r.try_get<B>(e), nullptr);
  EXPECT_TRUE(r.remove<A>(e));
  EXPECT_FALSE(r.remove<A>(e));
  EXPECT_FALSE(r.has<A>(e));
  EXPECT_EQ(r.try_get<A>(e), nullptr);
}

TEST(Registry, ErrorsNameEntityAndComponent) {
  Registry r;
  const Entity w = r.create();
  r.add<Name>(w, "world");
  const Entity m = r.create(w);
  r.add<Name>(m, "box");
  try {
    r.get<B>(m);
    FAIL();
  } catch (const Error& err) {
    EXPECT_THAT(err.what(), HasSubstr("entity 2 'world::box' has no component"));
    EXPECT_THAT(err.what(), HasSubstr("{anonymous}::B"));
  }
  r.add<A>(m);
  EXPECT_THROW(r.add<A>(m), Error);
  EXPECT_THROW(r.replace<B>(m, B{1}), Error);
  EXPECT_THROW(r.add<A>(999), Error);
}

TEST(Registry, ReplaceAndSetMarkChanged) {
  Registry r;
  const Entity e = r.create();
  r.add<A>(e, 1);
  EXPECT_EQ(r.changed_state<A>(e), ComponentState::kNoChange);
  r.replace<A>(e, A{2}, ComponentState::kPeriodic);
  EXPECT_EQ(r.changed_state<A>(e), ComponentState::kPeriodic);
  r.set<A>(e, A{3});  // one-time upgrades periodic
  EXPECT_EQ(r.changed_state<A>(e), ComponentState::kOneTime);
  r.mark_changed<A>(e, ComponentState::kPeriodic);  // never downgraded
  EXPECT_EQ(r.changed_state<A>(e), ComponentState::kOneTime);
  EXPECT_EQ(r.get<A>(e).v, 3);
  r.end_step();
  EXPECT_EQ(r.changed_state<A>(e), ComponentState::kNoChange);
}

TEST(Registry, EachVisitsEntitiesWithAllComponentsInInsertionOrder) {
  Registry r;
  std::vector<Entity> es;
  for (int i = 0; i < 10; ++i) {
    const Entity e = r.create();
    es.push_back(e);
    r.add<A>(e, i);
    if (i % 2 == 0) r.add<B>(e, i * 1.5);
  }
  std::vector<int> seen;
  r.each<A, B>([&](Entity, A& a, B& b) {
    seen.push_back(a.v);
    b.v += 1;
  });
  EXPECT_THAT(seen, ElementsAre(0, 2, 4, 6, 8));
  const Registry& cr = r;
  double sum = 0;
  cr.each<B>([&](Entity, const B& b) { sum += b.v; });
  EXPECT_DOUBLE_EQ(sum, 1.5 * (0 + 2 + 4 + 6 + 8) + 5);
}

TEST(Registry, EachPairsComponentsWhetherPoolsAreAlignedOrNot) {
  // 3000 entities span several pages; B is added in reverse order for the second half, so some
  // blocks are slot-aligned and others are not.
  Registry r;
  std::vector<Entity> es;
  for (int i = 0; i < 3000; ++i) {
    es.push_back(r.create());
    r.add<A>(es.back(), i);
  }
  for (int i = 0; i < 1500; ++i) r.add<B>(es[i], i * 2.0);
  for (int i = 2999; i >= 1500; --i) r.add<B>(es[i], i * 2.0);
  for (int pass = 0; pass < 2; ++pass) {  // the second pass uses the cached alignment
    int n = 0;
    r.each<A, B>([&](Entity e, A& a, B& b) {
      EXPECT_EQ(b.v, a.v * 2.0);
      EXPECT_EQ(e, es[a.v]);
      ++n;
    });
    EXPECT_EQ(n, 3000);
  }
  // Removing a later entity's B during an aligned pass skips it.
  int n = 0;
  r.each<A, B>([&](Entity e, A&, B&) {
    if (e == es[0]) r.remove<B>(es[1]);
    EXPECT_NE(e, es[1]);
    ++n;
  });
  EXPECT_EQ(n, 2999);
  r.end_step();
  n = 0;
  r.each<A, B>([&](Entity, A& a, B& b) {
    EXPECT_EQ(b.v, a.v * 2.0);
    ++n;
  });
  EXPECT_EQ(n, 2999);
}

TEST(Registry, EachStopsWhenCallbackReturnsFalse) {
  Registry r;
  for (int i = 0; i < 5; ++i) r.add<A>(r.create(), i);
  int n = 0;
  r.each<A>([&](Entity, A&) { return ++n < 3; });
  EXPECT_EQ(n, 3);
}

TEST(Registry, RemoveDuringIterationIsSafeAndSkipsUnvisited) {
  Registry r;
  std::vector<Entity> es;
  for (int i = 0; i < 6; ++i) {
    es.push_back(r.create());
    r.add<A>(es.back(), i);
  }
  std::vector<int> seen;
  r.each<A>([&](Entity e, A& a) {
    seen.push_back(a.v);
    if (e == es[1]) {
      r.remove<A>(es[3]);  // not yet visited: skipped
      r.remove<A>(e);      // the current one: its reference stays readable
      EXPECT_EQ(a.v, 1);
    }
  });
  EXPECT_THAT(seen, ElementsAre(0, 1, 2, 4, 5));
  EXPECT_EQ(r.count<A>(), 4u);
  r.end_step();
  std::vector<int> after;
  r.each<A>([&](Entity, A& a) { after.push_back(a.v); });
  EXPECT_THAT(after, ElementsAre(0, 2, 4, 5));  // stable compaction keeps order
  EXPECT_THAT(std::vector<Entity>(r.removed_components<A>().begin(),
                                  r.removed_components<A>().end()),
              ElementsAre());
}

TEST(Registry, AddDuringIterationIsNotVisitedAndReferencesStayValid) {
  Registry r;
  for (int i = 0; i < 3; ++i) r.add<A>(r.create(), i);
  A* first = &r.get<A>(1);
  int visits = 0;
  r.each<A>([&](Entity, A&) {
    ++visits;
    for (int k = 0; k < 3000; ++k) r.add<A>(r.create(), 100);  // forces new pages
  });
  EXPECT_EQ(visits, 3);
  EXPECT_EQ(first, &r.get<A>(1));  // pages never move
  EXPECT_EQ(first->v, 0);
}

TEST(Registry, ReferenceRuleWithinAStep) {
  // The rule in registry.h: references survive additions and removals until end_step.
  Registry r;
  const Entity keep = r.create();
  A& ref = r.add<A>(keep, 7);
  std::vector<Entity> others;
  for (int i = 0; i < 5000; ++i) {
    others.push_back(r.create());
    r.add<A>(others.back(), i);
  }
  for (Entity e : others) r.remove<A>(e);
  r.request_remove(others[0]);
  EXPECT_EQ(&ref, &r.get<A>(keep));
  EXPECT_EQ(ref.v, 7);
  r.end_step();
  EXPECT_EQ(r.get<A>(keep).v, 7);  // value kept; the reference is only guaranteed up to here
}

TEST(Registry, DeferredRecursiveRemoval) {
  Registry r;
  const Entity w = r.create();
  const Entity m = r.create(w);
  const Entity l1 = r.create(m);
  const Entity l2 = r.create(m);
  r.add<A>(l1, 1);
  r.add<A>(l2, 2);
  r.end_step();
  r.request_remove(m);
  EXPECT_TRUE(r.alive(l1));  // deferred
  EXPECT_TRUE(r.removal_pending(l2));
  std::vector<Entity> removed;
  r.each_removed<>([&](Entity e) { removed.push_back(e); });
  EXPECT_THAT(removed, ElementsAre(m, l1, l2));
  std::vector<Entity> removed_with_a;
  r.each_removed<A>([&](Entity e, A&) { removed_with_a.push_back(e); });
  EXPECT_THAT(removed_with_a, ElementsAre(l1, l2));
  r.end_step();
  EXPECT_FALSE(r.alive(m));
  EXPECT_FALSE(r.alive(l1));
  EXPECT_FALSE(r.alive(l2));
  EXPECT_TRUE(r.alive(w));
  EXPECT_TRUE(r.children(w).empty());
  EXPECT_EQ(r.count<A>(), 0u);
  EXPECT_EQ(r.size(), 1u);
}

TEST(Registry, NonRecursiveRemovalOrphansChildren) {
  Registry r;
  const Entity p = r.create();
  const Entity c = r.create(p);
  r.request_remove(p, false);
  r.end_step();
  EXPECT_TRUE(r.alive(c));
  EXPECT_EQ(r.parent(c), kNullEntity);
}

TEST(Registry, RemoveNowIsImmediate) {
  Registry r;
  const Entity p = r.create();
  const Entity c = r.create(p);
  r.add<A>(c, 3);
  r.remove_now(p);
  EXPECT_FALSE(r.alive(p));
  EXPECT_FALSE(r.alive(c));
  EXPECT_EQ(r.count<A>(), 0u);
  EXPECT_THROW(r.remove_now(p), Error);
  EXPECT_THROW(r.request_remove(p), Error);
}

TEST(Registry, GraphNamesAndScopedLookup) {
  Registry r;
  const Entity w = r.create();
  r.add<Name>(w, "default");
  const Entity m = r.create(w);
  r.add<Name>(m, "x3");
  const Entity l = r.create(m);
  r.add<Name>(l, "base_link");
  const Entity j = r.create(m);
  r.add<Name>(j, "rotor_0_joint");
  EXPECT_EQ(r.parent(l), m);
  EXPECT_EQ(r.get<ParentEntity>(l).value, m);
  EXPECT_THAT(std::vector<Entity>(r.children(m).begin(), r.children(m).end()), ElementsAre(l, j));
  EXPECT_THAT(r.descendants(w), ElementsAre(m, l, j));
  EXPECT_EQ(r.child_by_name(m, "rotor_0_joint"), j);
  EXPECT_EQ(r.child_by_name(m, "nope"), kNullEntity);
  EXPECT_EQ(r.child_by_name(kNullEntity, "default"), w);
  EXPECT_EQ(r.scoped_name(l), "default::x3::base_link");
  EXPECT_EQ(r.find_scoped("default::x3::base_link"), l);
  EXPECT_EQ(r.find_scoped("default::x3::missing"), kNullEntity);
  const Entity loose = r.create();
  EXPECT_EQ(r.scoped_name(loose), "#" + std::to_string(loose));
}

TEST(Registry, SetParentRejectsCycles) {
  Registry r;
  const Entity a = r.create();
  const Entity b = r.create(a);
  const Entity c = r.create();
  EXPECT_THROW(r.set_parent(a, b), Error);
  r.set_parent(b, c);
  EXPECT_EQ(r.parent(b), c);
  EXPECT_TRUE(r.children(a).empty());
  r.set_parent(b, kNullEntity);
  EXPECT_FALSE(r.has<ParentEntity>(b));
}

TEST(Registry, EachNewListsEntitiesCreatedThisStep) {
  Registry r;
  const Entity a = r.create();
  r.add<A>(a, 1);
  r.end_step();
  const Entity b = r.create();
  r.add<A>(b, 2);
  const Entity c = r.create();
  std::vector<Entity> seen;
  r.each_new<A>([&](Entity e, A&) { seen.push_back(e); });
  EXPECT_THAT(seen, ElementsAre(b));
  std::vector<Entity> all_new;
  r.each_new<>([&](Entity e) { all_new.push_back(e); });
  EXPECT_THAT(all_new, ElementsAre(b, c));
  r.end_step();
  int n = 0;
  r.each_new<>([&](Entity) { ++n; });
  EXPECT_EQ(n, 0);
}

TEST(Registry, EachChangedAndMarksClearedPerStep) {
  Registry r;
  const Entity a = r.create();
  const Entity b = r.create();
  r.add<A>(a, 1);
  r.add<A>(b, 2);
  r.add<B>(b, 0.5);
  r.mark_changed<A>(b);
  r.mark_changed<A>(a, ComponentState::kPeriodic);
  r.mark_changed<A>(b);  // listed once
  std::vector<Entity> seen;
  r.each_changed<A>([&](Entity e, A&) { seen.push_back(e); });
  EXPECT_THAT(seen, ElementsAre(b, a));
  std::vector<Entity> with_b;
  r.each_changed<A, B>([&](Entity e, A&, B&) { with_b.push_back(e); });
  EXPECT_THAT(with_b, ElementsAre(b));
  r.remove<A>(a);
  EXPECT_THAT(std::vector<Entity>(r.removed_components<A>().begin(),
                                  r.removed_components<A>().end()),
              ElementsAre(a));
  r.end_step();
  seen.clear();
  r.each_changed<A>([&](Entity e, A&) { seen.push_back(e); });
  EXPECT_TRUE(seen.empty());
  EXPECT_TRUE(r.removed_components<A>().empty());
}

TEST(Registry, LayoutEpochMovesOnlyWhenSlotsChange) {
  Registry r;
  const Entity a = r.create();
  const Entity b = r.create();
  r.add<A>(a, 1);
  r.add<B>(b, 0.5);
  const auto e0 = r.layout_epoch();
  A* kept = &r.get<A>(a);
  // Values written, marks set and cleared, an empty step: the same slots.
  r.get<A>(a).v = 7;
  r.set<B>(b, B{1.5});
  r.mark_changed<A>(a, ComponentState::kPeriodic);
  r.end_step();
  r.end_step();
  EXPECT_EQ(r.layout_epoch(), e0);
  EXPECT_EQ(kept, r.try_get<A>(a));
  EXPECT_EQ(kept->v, 7);
  r.add<A>(b, 2);  // a component added anywhere
  const auto e1 = r.layout_epoch();
  EXPECT_NE(e1, e0);
  r.remove<A>(b);  // removed: visible at once, storage compacted at end_step
  const auto e2 = r.layout_epoch();
  EXPECT_NE(e2, e1);
  r.end_step();
  EXPECT_NE(r.layout_epoch(), e2);
  // Marks and removals in several pools are all cleared by the one end_step.
  r.add<C>(a, "x");
  r.mark_changed<C>(a);
  r.mark_changed<B>(b);
  r.remove<A>(a);
  r.end_step();
  EXPECT_EQ(r.changed_state<C>(a), ComponentState::kNoChange);
  EXPECT_EQ(r.changed_state<B>(b), ComponentState::kNoChange);
  EXPECT_TRUE(r.removed_components<A>().empty());
  EXPECT_EQ(r.count<A>(), 0u);
}

TEST(Registry, SnapshotRestoreInPlaceKeepsReferences) {
  Registry r;
  const Entity e = r.create();
  A& ref = r.add<A>(e, 1);
  r.add<C>(e, "hello");
  r.end_step();
  const Snapshot s = r.snapshot();
  ref.v = 42;
  r.get<C>(e).s = "changed";
  r.restore(s);
  EXPECT_EQ(&ref, &r.get<A>(e));
  EXPECT_EQ(ref.v, 1);
  EXPECT_EQ(r.get<C>(e).s, "hello");
}

TEST(Registry, RestoreAfterStructuralChangesIsExact) {
  Registry r;
  const Entity w = r.create();
  r.add<Name>(w, "w");
  std::vector<Entity> es;
  for (int i = 0; i < 5; ++i) {
    es.push_back(r.create(w));
    r.add<A>(es.back(), i);
  }
  r.end_step();
  const Snapshot s = r.snapshot();
  const auto before = r.entities();

  // Structural changes: remove two, add three, add a new component type.
  r.request_remove(es[1]);
  r.remove<A>(es[3]);
  const Entity extra = r.create(w);
  r.add<A>(extra, 99);
  r.add<B>(es[0], 3.0);
  r.end_step();
  r.restore(s);

  EXPECT_EQ(r.entities(), before);
  EXPECT_FALSE(r.alive(extra));
  EXPECT_TRUE(r.alive(es[1]));
  EXPECT_EQ(r.count<B>(), 0u);
  EXPECT_THAT(std::vector<Entity>(r.children(w).begin(), r.children(w).end()),
              ElementsAre(es[0], es[1], es[2], es[3], es[4]));
  std::vector<std::pair<Entity, int>> order;
  r.each<A>([&](Entity e, A& a) { order.emplace_back(e, a.v); });
  ASSERT_EQ(order.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(order[i], std::make_pair(es[i], i));
  // Ids are still never reused.
  EXPECT_GT(r.create(), extra);
}

}  // namespace
}  // namespace kestrel::ecs

// Serialization hook: a component with a stable name and a byte encoding.
namespace kestrel::ecs {
namespace {
struct Temperature {
  double kelvin = 0;
};
}  // namespace
template <>
struct ComponentSerializer<Temperature> {
  static constexpr std::string_view kName = "test.Temperature";
  static void write(const Temperature& t, std::string& out) {
    out.append(reinterpret_cast<const char*>(&t.kelvin), sizeof t.kelvin);
  }
  static Temperature read(std::string_view in) {
    if (in.size() != sizeof(double)) throw Error("Temperature: expected 8 bytes");
    Temperature t;
    std::memcpy(&t.kelvin, in.data(), sizeof t.kelvin);
    return t;
  }
};
namespace {
TEST(Registry, SerializationHookRoundTrips) {
  Registry r;
  r.register_serializable<Temperature>();
  const Entity a = r.create();
  r.add<Temperature>(a, 273.15);
  r.add<A>(a, 1);  // no serializer: not listed
  std::vector<std::pair<std::string, std::string>> out;
  r.serialize(a, [&](std::string_view n, std::string_view b) { out.emplace_back(n, b); });
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, "test.Temperature");
  const Entity b = r.create();
  r.deserialize(b, out[0].first, out[0].second);
  EXPECT_DOUBLE_EQ(r.get<Temperature>(b).kelvin, 273.15);
  EXPECT_THROW(r.deserialize(b, "test.Temperature", "xx"), Error);
  EXPECT_THROW(r.deserialize(b, "no.Such", ""), Error);
}
}  // namespace
}  // namespace kestrel::ecs

namespace kestrel::ecs {
namespace {

TEST(Registry, CopyComponentsCopiesValuesNotTheGraph) {
  Registry r;
  const Entity parent = r.create();
  const Entity src = r.create(parent);
  r.add<components::Name>(src, components::Name{"src"});
  r.add<A>(src);
  r.get<A>(src).v = 7;
  const Entity dst = r.create();
  r.add<A>(dst);  // kept: copy_components never overwrites
  r.copy_components(src, dst);
  EXPECT_EQ(r.get<components::Name>(dst).value, "src");
  EXPECT_EQ(r.get<A>(dst).v, 0);
  EXPECT_EQ(r.parent(dst), kNullEntity) << "ParentEntity is not copied";
  r.remove_now(src);
  EXPECT_THROW(r.copy_components(src, dst), Error);
}

}  // namespace
}  // namespace kestrel::ecs

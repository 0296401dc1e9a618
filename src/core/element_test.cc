#include "kestrel/core/element.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kestrel {
namespace {

using ::testing::HasSubstr;

constexpr const char* kPlugin = R"(<plugin filename="x" name="y">
  <motorConstant>8.54858e-06</motorConstant>
  <turningDirection>cw</turningDirection>
  <enabled>true</enabled>
  <count>3</count>
  <offset>1 2 3</offset>
  <pose>1 2 3 0 0 1.5707963</pose>
  <bad>12abc</bad>
  <motorConstnt>1</motorConstnt>
</plugin>)";

TEST(Element, TypedGettersAndLocations) {
  const auto e = Element::parse(kPlugin, "world.sdf", 40);
  EXPECT_EQ(e->name(), "plugin");
  EXPECT_EQ(e->line(), 40);
  EXPECT_EQ(e->where(), "world.sdf:40");
  EXPECT_EQ(*e->attribute("name"), "y");
  EXPECT_DOUBLE_EQ(e->get<double>("motorConstant"), 8.54858e-06);
  EXPECT_EQ(e->get<std::string>("turningDirection"), "cw");
  EXPECT_TRUE(e->get<bool>("enabled"));
  EXPECT_EQ(e->get<int>("count"), 3);
  EXPECT_EQ(e->get<ignition::math::Vector3d>("offset"), ignition::math::Vector3d(1, 2, 3));
  EXPECT_NEAR(e->get<ignition::math::Pose3d>("pose").Rot().Yaw(), 1.5707963, 1e-9);
  EXPECT_DOUBLE_EQ(e->get_or<double>("momentConstant", 0.016), 0.016);
  EXPECT_EQ(e->child("pose")->line(), 46);
}

TEST(Element, LoudErrorsNameFileLineAndValue) {
  const auto e = Element::parse(kPlugin, "world.sdf", 40);
  try {
    e->get<double>("bad");
    FAIL();
  } catch (const Error& err) {
    EXPECT_THAT(err.what(), HasSubstr("world.sdf:47"));
    EXPECT_THAT(err.what(), HasSubstr("expected a finite number, found '12abc'"));
  }
  try {
    e->get<double>("rotorDragCoefficient");
    FAIL();
  } catch (const Error& err) {
    EXPECT_THAT(err.what(), HasSubstr("world.sdf:40: <plugin> is missing required parameter "
                                      "<rotorDragCoefficient>"));
  }
  EXPECT_THROW(e->get<int>("turningDirection"), Error);
  EXPECT_THROW(e->get<ignition::math::Vector3d>("count"), Error);
  EXPECT_THROW(Element::parse("<a><b></a>"), Error);
}

TEST(Element, ReportsParametersNobodyRead) {
  const auto e = Element::parse(kPlugin, "world.sdf", 40);
  e->get<double>("motorConstant");
  std::vector<std::string> unread;
  for (const Element* c : e->unread_children()) unread.push_back(c->name());
  EXPECT_THAT(unread, ::testing::Contains("motorConstnt"));
  EXPECT_THAT(unread, ::testing::Not(::testing::Contains("motorConstant")));
}

TEST(Element, RejectUnknownAttributes) {
  const auto e =
      Element::parse("<f>\n  <fault time=\"1\" duraton=\"3\"/>\n  <land/>\n</f>", "w.sdf", 10);
  const Element* fault = e->child("fault");
  EXPECT_EQ(fault->attribute_names(), (std::vector<std::string>{"time", "duraton"}));
  EXPECT_NO_THROW(fault->reject_unknown_attributes({"time", "duraton"}));
  try {
    fault->reject_unknown_attributes({"time", "duration"});
    FAIL() << "expected an error";
  } catch (const Error& err) {
    EXPECT_EQ(err.where(), "w.sdf:11");
    EXPECT_THAT(err.what(), HasSubstr("<fault> has unknown attribute 'duraton'"));
    EXPECT_THAT(err.what(), HasSubstr("(accepted: time, duration)"));
  }
  EXPECT_NO_THROW(e->child("land")->reject_unknown_attributes({}));
  EXPECT_THAT([&] { fault->reject_unknown_attributes({}); },
              ::testing::ThrowsMessage<Error>(HasSubstr("(accepted: none)")));
}

}  // namespace
}  // namespace kestrel

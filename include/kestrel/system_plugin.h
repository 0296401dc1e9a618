#pragma once
/// @file Writing an external system: a shared library loaded at run time with ignition-plugin.
///
///   class MySystem : public kestrel::System, public kestrel::ISystemPreUpdate { ... };
///   KESTREL_ADD_SYSTEM(my_ns::MySystem, "my_ns::MySystem")
///
/// Build it as a SHARED library (link kestrel_core and ignition-plugin1::register), put its
/// folder on KESTREL_SYSTEM_PLUGIN_PATH and declare it in the world:
///   <plugin filename="my_system" name="my_ns::MySystem"> ... </plugin>
/// `filename` finds the library (libmy_system.so, my_system.so, or the exact file name);
/// `name` picks the system in it by the alias given to KESTREL_ADD_SYSTEM.
/// The library stays loaded until the process exits (systems may outlive any one Runner).

#include <memory>

#include <ignition/plugin/Register.hh>

#include "kestrel/system.h"

namespace kestrel {

/// What an external library exports: a factory of system instances.
class SystemFactory {
 public:
  virtual ~SystemFactory() = default;
  virtual std::unique_ptr<System> create() const = 0;
};

/// The factory KESTREL_ADD_SYSTEM registers for system class T.
template <class T>
class SystemFactoryFor : public SystemFactory {
 public:
  std::unique_ptr<System> create() const override { return std::make_unique<T>(); }
};

}  // namespace kestrel

/// Registers `SystemClass` under the alias `name` (the `<plugin name=...>` that selects it).
#define KESTREL_ADD_SYSTEM(SystemClass, name)                                          \
  IGNITION_ADD_PLUGIN(::kestrel::SystemFactoryFor<SystemClass>, ::kestrel::SystemFactory) \
  IGNITION_ADD_PLUGIN_ALIAS(::kestrel::SystemFactoryFor<SystemClass>, name)

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

#include <ignition/plugin/Register.hh>

#include "kestrel/system_factory.h"

/// Registers `SystemClass` under the alias `name` (the `<plugin name=...>` that selects it).
#define KESTREL_ADD_SYSTEM(SystemClass, name)                                             \
  IGNITION_ADD_PLUGIN(::kestrel::SystemFactoryFor<SystemClass>, ::kestrel::SystemFactory) \
  IGNITION_ADD_PLUGIN_ALIAS(::kestrel::SystemFactoryFor<SystemClass>, name)

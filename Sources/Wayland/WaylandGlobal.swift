/// A global object the compositor announces in its registry (`wl_registry.global`): what a
/// client may bind.
package struct WaylandGlobal: Sendable, Hashable {
    /// The registry's numeric name for it, which `wl_registry.bind` takes.
    package var name: UInt32
    /// Its interface, e.g. `zwlr_foreign_toplevel_manager_v1`.
    package var interface: String
    /// The highest version of the interface the compositor offers.
    package var version: UInt32
}

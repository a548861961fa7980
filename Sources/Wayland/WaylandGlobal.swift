/// A global object the compositor announces in its registry (`wl_registry.global`): what a
/// client may bind.
public struct WaylandGlobal: Sendable, Hashable {
    /// The registry's numeric name for it, which `wl_registry.bind` takes.
    public var name: UInt32
    /// Its interface, e.g. `zwlr_foreign_toplevel_manager_v1`.
    public var interface: String
    /// The highest version of the interface the compositor offers.
    public var version: UInt32
}

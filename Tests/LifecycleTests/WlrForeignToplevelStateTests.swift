import Testing
import Wayland

/// The `state` array of `zwlr_foreign_toplevel_handle_v1`, decoded.
@Suite struct WlrForeignToplevelStateTests {
    @Test func eachProtocolValueIsItsState() {
        #expect(ForeignToplevelState(protocolValues: [0]) == .maximized)
        #expect(ForeignToplevelState(protocolValues: [1]) == .minimized)
        #expect(ForeignToplevelState(protocolValues: [2]) == .activated)
        #expect(ForeignToplevelState(protocolValues: [3]) == .fullscreen)
        #expect(ForeignToplevelState(protocolValues: []).isEmpty)
    }

    @Test func severalValuesRepeatsAndUnknownOnes() {
        let state = ForeignToplevelState(protocolValues: [3, 2, 2, 0])
        #expect(state == [.fullscreen, .activated, .maximized])
        #expect(state.description == "[activated, maximized, fullscreen]")
        // A later version's value is kept as its bit; one beyond 31 is dropped.
        #expect(ForeignToplevelState(protocolValues: [9, 2, 4_000_000_000]).rawValue == 1 << 9 | 1 << 2)
    }
}

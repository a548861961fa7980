import NotifyBusLifecycle
import Testing

@Suite struct ToplevelWindowTests {
    @Test func aWindowWithoutAnAppIDDiffersFromOneWithIt() {
        #expect(ToplevelWindow(id: 1, appID: nil, activated: false) != ToplevelWindow(id: 1, appID: "a", activated: false))
    }
}

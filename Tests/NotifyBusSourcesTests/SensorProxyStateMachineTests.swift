import DBus
import NotifyBus
import Testing

@testable import NotifyBusSources

private typealias Machine = SensorProxyStateMachine<Int>
private typealias Action = Machine.Action

private let serviceOwner: BusName = ":1.5"
private let interface: InterfaceName = "net.hadess.SensorProxy"
private let allSensors: [String: DBusValue] = [
    "HasAccelerometer": .boolean(true), "AccelerometerOrientation": .string("normal"),
    "HasAmbientLight": .boolean(true), "LightLevel": .double(42), "LightLevelUnit": .string("lux"),
    "HasProximity": .boolean(true), "ProximityNear": .boolean(false),
]
private let claiming: Machine.SensorState = .claiming(afterFailure: false)
private let settling: Machine.SensorState = .settling(afterFailure: false)
private let failure = DBusError(name: "org.freedesktop.DBus.Error.AccessDenied", message: "not allowed")

private func makeMachine() -> Machine {
    Machine(busDescription: "system bus", service: "net.hadess.SensorProxy", interface: interface)
}

private func light(_ level: Double, _ unit: String = "lux") -> Action {
    .publish(key: "light", value: .object(["level": .number(level), "unit": .string(unit)]))
}

private func publishes(_ actions: [Action]) -> [Action] {
    actions.filter { if case .publish = $0 { true } else { false } }
}

extension Machine {
    /// A signal from the owner.
    mutating func signal(_ changed: [String: DBusValue], invalidated: [String] = [], from sender: BusName = serviceOwner) -> [Action] {
        propertiesChanged(interface: interface, changed: changed, invalidated: invalidated, sender: sender)
    }

    /// Owner present, properties read, every sensor in `properties` claimed (claims answered).
    mutating func claimedAll(_ properties: [String: DBusValue] = allSensors) {
        _ = ownerChanged(to: serviceOwner, epoch: epoch + 1)
        _ = propertiesLoaded(properties)
        for sensor in SensorProxySensor.allCases where state(of: sensor) == claiming {
            _ = claimReplied(sensor, epoch: epoch, error: nil)
        }
    }

    /// Every sensor live through its first reading in a signal.
    mutating func liveAll() {
        claimedAll()
        _ = signal(["AccelerometerOrientation": .string("normal"), "ProximityNear": .boolean(false), "LightLevel": .double(42)])
    }
}

@Suite("SensorProxyStateMachine")
struct SensorProxyStateMachineTests {
    @Test func startingAndAnAbsentServiceAreReported() {
        var machine = makeMachine()
        #expect(machine.started() == [.reportStatus(.starting(reason: "connecting to the system bus"))])
        #expect(machine.owner == .unknown)
        #expect(machine.ownerChanged(to: nil, epoch: 1) == [.reportStatus(.unavailable(reason: "iio-sensor-proxy (net.hadess.SensorProxy) is not running"))])
        #expect(machine.owner == .absent)
        // The same answer again changes nothing.
        #expect(machine.ownerChanged(to: nil, epoch: 1) == [])
        #expect(machine.isSettled)
    }

    @Test func anOwnerIsReadThenItsPresentSensorsClaimedAndReadingsBeforeTheClaimIgnored() {
        var machine = makeMachine()
        // The proxy reads a new owner's properties by itself: nothing to ask for.
        #expect(machine.ownerChanged(to: serviceOwner, epoch: 1) == [])
        #expect(machine.epoch == 1)
        #expect(machine.owner == .present(name: serviceOwner, propertiesRead: false))
        #expect(!machine.isSettled)
        #expect(machine.ownerChanged(to: serviceOwner, epoch: 1) == [])

        let properties = allSensors.merging(["HasProximity": .boolean(false)]) { $1 }
        #expect(
            machine.propertiesLoaded(properties) == [
                .claim(.accelerometer, epoch: 1), .claim(.light, epoch: 1),
                .reportStatus(.starting(reason: "claiming sensors")),
            ])
        #expect(machine.owner == .present(name: serviceOwner, propertiesRead: true))
        #expect(machine.state(of: .accelerometer) == claiming)
        #expect(machine.state(of: .light) == claiming)
        #expect(machine.state(of: .proximity) == .absent)
        // A claim on its way is not sent twice, and readings before the claim are not published.
        #expect(machine.signal(["HasAccelerometer": .boolean(true), "AccelerometerOrientation": .string("left-up")])
            == [.reportStatus(.starting(reason: "claiming sensors"))])
        #expect(!machine.isSettled)
    }

    @Test func aClaimSettlesThroughAReadingInASignal() {
        var machine = makeMachine()
        machine.claimedAll()
        #expect(machine.state(of: .accelerometer) == settling)
        // A read while settling publishes nothing: the value may be the daemon's default.
        #expect(publishes(machine.propertiesLoaded(allSensors)).isEmpty)
        #expect(
            machine.signal(["AccelerometerOrientation": .string("left-up")]) == [
                .cancelSettleTimer(.accelerometer), .publish(key: "orientation", value: "landscape-left"),
                .reportStatus(.starting(reason: "claiming sensors")),
            ])
        #expect(machine.state(of: .accelerometer) == .live)
        // The unit alone is a light reading: live, though no level is known to publish yet
        // (the level read while settling is not trusted).
        _ = machine.signal(["ProximityNear": .boolean(true)])
        #expect(machine.signal(["LightLevelUnit": .string("vendor")]) == [.cancelSettleTimer(.light), .reportStatus(.running)])
        #expect(machine.isSettled)
        #expect(machine.signal(["LightLevel": .double(5)]) == [light(5, "vendor"), .reportStatus(.running)])
    }

    @Test func aClaimSettlesWhenItsTimerFiresAndIsThenRead() {
        var machine = makeMachine()
        _ = machine.ownerChanged(to: serviceOwner, epoch: 1)
        _ = machine.propertiesLoaded(["HasProximity": .boolean(true), "ProximityNear": .boolean(false)])
        #expect(machine.claimReplied(.proximity, epoch: 1, error: nil) == [.startSettleTimer(.proximity)])
        #expect(machine.state(of: .proximity) == settling)
        #expect(machine.settleTimerFired(.proximity) == [.readProperties])
        #expect(machine.state(of: .proximity) == .live)
        #expect(machine.settleTimerFired(.proximity) == [])
        #expect(
            machine.propertiesLoaded(["HasProximity": .boolean(true), "ProximityNear": .boolean(false)])
                == [.publish(key: "proximity", value: false), .reportStatus(.running)])
    }

    @Test func staleRepliesAndOtherSendersAreIgnored() {
        var machine = makeMachine()
        _ = machine.ownerChanged(to: ":1.4", epoch: 1)
        _ = machine.propertiesLoaded(allSensors)
        // The owner restarts: claim replies for the first one no longer count.
        #expect(machine.ownerChanged(to: serviceOwner, epoch: 2) == [])
        #expect(machine.epoch == 2)
        #expect(machine.claimReplied(.accelerometer, epoch: 1, error: nil) == [])
        #expect(machine.claimReplied(.light, epoch: 1, error: failure) == [])
        #expect(machine.owner == .present(name: serviceOwner, propertiesRead: false))
        #expect(machine.presentSensors.isEmpty)
        // Without an owner, a late GetAll answer counts for nothing (the proxy drops those of a
        // former owner that a new owner's GetAll superseded).
        _ = machine.ownerChanged(to: nil, epoch: 3)
        #expect(machine.propertiesLoaded(allSensors) == [])
        #expect(machine.propertiesLoadFailed(failure) == [])
        #expect(machine.owner == .absent)
        #expect(machine.presentSensors.isEmpty)

        machine.liveAll()
        #expect(machine.signal(["AccelerometerOrientation": .string("right-up")], from: ":1.4") == [])
        #expect(machine.propertiesChanged(interface: "org.example", changed: ["ProximityNear": .boolean(true)], invalidated: [], sender: serviceOwner) == [])
        #expect(publishes(machine.signal(["AccelerometerOrientation": .string("right-up")])) == [.publish(key: "orientation", value: "landscape-right")])
    }

    @Test func anOwnerRestartForgetsTheClaimsAndClaimsAgain() {
        var machine = makeMachine()
        machine.claimedAll()
        _ = machine.settleTimerFired(.light)
        #expect(machine.ownerChanged(to: nil, epoch: 2) == [
            .cancelSettleTimer(.accelerometer), .cancelSettleTimer(.proximity),
            .reportStatus(.unavailable(reason: "iio-sensor-proxy (net.hadess.SensorProxy) is not running")),
        ])
        #expect(machine.presentSensors.isEmpty)
        // Signals from nobody are ignored.
        #expect(machine.signal(["HasAccelerometer": .boolean(true)]) == [])
        #expect(machine.ownerChanged(to: ":1.9", epoch: 3) == [])
        #expect(
            machine.propertiesLoaded(allSensors) == [
                .claim(.accelerometer, epoch: 3), .claim(.light, epoch: 3), .claim(.proximity, epoch: 3),
                .reportStatus(.starting(reason: "claiming sensors")),
            ])
    }

    @Test func aDisconnectionMakesTheOwnerUnknownSoTheSameOwnerIsReadAgain() {
        var machine = makeMachine()
        machine.claimedAll()
        let error = DBusError(name: DBusError.Name.disconnected, message: "the bus closed the connection")
        #expect(machine.disconnected(error, epoch: 2) == [
            .cancelSettleTimer(.accelerometer), .cancelSettleTimer(.light), .cancelSettleTimer(.proximity),
            .reportStatus(.unavailable(reason: "system bus unreachable: \(error)")),
        ])
        #expect(machine.owner == .unknown)
        #expect(machine.epoch == 2)
        // The same owner counts as new: the proxy reads it again, and its sensors are claimed again.
        #expect(machine.ownerChanged(to: serviceOwner, epoch: 3) == [])
        #expect(machine.owner == .present(name: serviceOwner, propertiesRead: false))
        #expect(!machine.isSettled)
        #expect(machine.propertiesLoaded(allSensors) == [
            .claim(.accelerometer, epoch: 3), .claim(.light, epoch: 3), .claim(.proximity, epoch: 3),
            .reportStatus(.starting(reason: "claiming sensors")),
        ])
    }

    @Test func aFailedClaimMakesTheSensorUnclaimableAndIsTriedAgainWithoutWaiting() {
        var machine = makeMachine()
        _ = machine.ownerChanged(to: serviceOwner, epoch: 1)
        _ = machine.propertiesLoaded(["HasAccelerometer": .boolean(true), "HasProximity": .boolean(true)])
        #expect(machine.claimReplied(.accelerometer, epoch: 1, error: failure) == [
            .reportProblem("ClaimAccelerometer failed: \(failure)"), .reportStatus(.starting(reason: "claiming sensors")),
        ])
        #expect(machine.state(of: .accelerometer) == .unclaimable)
        _ = machine.claimReplied(.proximity, epoch: 1, error: nil)
        #expect(machine.signal(["ProximityNear": .boolean(true)]) == [
            .cancelSettleTimer(.proximity), .publish(key: "proximity", value: true), .reportStatus(.running),
        ])
        // The next read that lists it claims it again; it is not waited for meanwhile.
        #expect(machine.propertiesLoaded(["HasAccelerometer": .boolean(true)]) == [
            .claim(.accelerometer, epoch: 1), .reportStatus(.running),
        ])
        #expect(machine.state(of: .accelerometer) == .claiming(afterFailure: true))
        #expect(machine.isSettled)
        #expect(machine.claimReplied(.accelerometer, epoch: 1, error: nil) == [.startSettleTimer(.accelerometer)])
        #expect(machine.state(of: .accelerometer) == .settling(afterFailure: true))
        #expect(machine.isSettled)
    }

    @Test func aPlugOutResetsTheKeyAndAPlugInClaimsAgain() {
        var machine = makeMachine()
        machine.liveAll()
        #expect(machine.signal(["HasAmbientLight": .boolean(false), "HasAccelerometer": .boolean(false)]) == [
            .publish(key: "orientation", value: "unknown"), .publish(key: "light", value: .null), .reportStatus(.running),
        ])
        #expect(machine.lightLevel == nil)
        #expect(machine.presentSensors == [.proximity])
        // Unplugging what is absent resets nothing.
        #expect(machine.signal(["HasAmbientLight": .boolean(false)]) == [.reportStatus(.running)])
        #expect(machine.signal(["HasAmbientLight": .boolean(true)]) == [
            .claim(.light, epoch: 1), .reportStatus(.starting(reason: "claiming sensors")),
        ])
        _ = machine.claimReplied(.light, epoch: 1, error: nil)
        // Removed while settling: its timer is cancelled.
        #expect(machine.signal(["HasAmbientLight": .boolean(false), "HasProximity": .boolean(false)]) == [
            .cancelSettleTimer(.light), .publish(key: "light", value: .null),
            .publish(key: "proximity", value: .null),
            .reportStatus(.unavailable(reason: "iio-sensor-proxy reports no sensors")),
        ])
        // A claim answered after its sensor went away is dropped.
        _ = machine.signal(["HasAmbientLight": .boolean(true)])
        _ = machine.signal(["HasAmbientLight": .boolean(false)])
        #expect(machine.claimReplied(.light, epoch: 1, error: nil) == [])
        #expect(machine.state(of: .light) == .absent)
    }

    @Test func readingsAreMappedCombinedAndCheckedForType() {
        var machine = makeMachine()
        machine.liveAll()
        for (raw, mapped) in [("normal", "portrait"), ("bottom-up", "portrait-upside-down"), ("left-up", "landscape-left"), ("right-up", "landscape-right"), ("undefined", "unknown")] {
            #expect(publishes(machine.signal(["AccelerometerOrientation": .string(raw)])) == [.publish(key: "orientation", value: .string(mapped))])
        }
        #expect(machine.signal(["AccelerometerOrientation": .string("sideways")]) == [
            .reportProblem("AccelerometerOrientation has an unknown value 'sideways'; skipped"), .reportStatus(.running),
        ])
        #expect(machine.signal(["ProximityNear": .int32(1)]) == [
            .reportProblem("ProximityNear has type 'i' (\(DBusValue.int32(1))), expected 'b'; skipped"), .reportStatus(.running),
        ])
        // Level and unit in one value; the unit is kept for a level alone.
        #expect(publishes(machine.signal(["LightLevel": .double(7.5), "LightLevelUnit": .string("vendor")])) == [light(7.5, "vendor")])
        #expect(publishes(machine.signal(["LightLevel": .double(8)])) == [light(8, "vendor")])
        let bad = machine.signal(["LightLevel": .double(.infinity), "LightLevelUnit": .string("candela")])
        #expect(bad.count == 3)
        #expect(publishes(bad).isEmpty)
        #expect(machine.lightUnit == "vendor")
        #expect(machine.lightLevel == 8)
        #expect(machine.signal(["HasProximity": .string("yes")]).first == .reportProblem(
            "HasProximity has type 's' (\(DBusValue.string("yes"))), expected 'b'; skipped"))
        #expect(machine.state(of: .proximity) == .live)
    }

    @Test func theLightUnitDefaultsToLux() {
        var machine = makeMachine()
        _ = machine.ownerChanged(to: serviceOwner, epoch: 1)
        _ = machine.propertiesLoaded(["HasAmbientLight": .boolean(true)])
        _ = machine.claimReplied(.light, epoch: 1, error: nil)
        #expect(publishes(machine.signal(["LightLevel": .double(3)])) == [light(3, "lux")])
    }

    @Test func invalidatedPropertiesAndFailedReadsAreHandled() {
        var machine = makeMachine()
        machine.liveAll()
        #expect(machine.signal([:], invalidated: ["LightLevel"]) == [.readProperties, .reportStatus(.running)])
        #expect(machine.propertiesLoadFailed(failure) == [
            .reportProblem("GetAll(net.hadess.SensorProxy) failed: \(failure)"),
            .reportStatus(.unavailable(reason: "cannot read net.hadess.SensorProxy: \(failure)")),
        ])
        let malformed = DBusError(name: DBusError.Name.invalidArgs, message: "PropertiesChanged has arguments 's'")
        #expect(machine.malformedSignal(malformed) == [.reportProblem("unexpected signal: \(malformed)")])
    }

    @Test func aRereadSyncsReadsAndWaitsUntilSettledWithinItsTimeLimit() {
        var machine = makeMachine()
        #expect(machine.rereadRequested() == .syncWithBus)
        #expect(machine.busSynced() == .finish)  // no owner: nothing to read
        _ = machine.ownerChanged(to: serviceOwner, epoch: 1)
        #expect(machine.busSynced() == .readProperties)
        _ = machine.propertiesLoaded(allSensors)
        #expect(machine.waitUntilSettled(1) == [.startSettleWaitTimer])
        #expect(machine.waitUntilSettled(2) == [])
        for sensor in SensorProxySensor.allCases { _ = machine.claimReplied(sensor, epoch: 1, error: nil) }
        _ = machine.settleTimerFired(.accelerometer)
        _ = machine.settleTimerFired(.light)
        #expect(machine.settleTimerFired(.proximity) == [.readProperties])
        // Published once the read after the last settle is applied.
        #expect(machine.propertiesLoaded(allSensors) == [
            .publish(key: "orientation", value: "portrait"), light(42), .publish(key: "proximity", value: false),
            .reportStatus(.running), .cancelSettleWaitTimer, .finishWaiters([1, 2]),
        ])
        #expect(machine.waitUntilSettled(3) == [.finishWaiters([3])])
        #expect(machine.settleWaitTimerFired() == [])

        // The time limit finishes waiters that the state never settles for.
        _ = machine.ownerChanged(to: ":1.9", epoch: 2)
        #expect(machine.waitUntilSettled(4) == [.startSettleWaitTimer])
        #expect(machine.settleWaitTimerFired() == [.finishWaiters([4])])
        // An unavailable status settles too.
        _ = machine.waitUntilSettled(5)
        #expect(machine.ownerChanged(to: nil, epoch: 3).suffix(2) == [.cancelSettleWaitTimer, .finishWaiters([5])])
    }

    @Test func stopReleasesExactlyTheClaimsHeldOrOnTheirWayAndEndsEverything() {
        var machine = makeMachine()
        _ = machine.ownerChanged(to: serviceOwner, epoch: 1)
        _ = machine.propertiesLoaded(allSensors)
        _ = machine.claimReplied(.accelerometer, epoch: 1, error: failure)   // unclaimable
        _ = machine.claimReplied(.light, epoch: 1, error: nil)   // settling; proximity still claiming
        _ = machine.waitUntilSettled(1)
        #expect(machine.stopRequested() == [
            .cancelSettleWaitTimer, .finishWaiters([1]), .cancelSettleTimer(.light), .releaseAndClose([.light, .proximity]),
        ])
        #expect(machine.isStopped)
        // After the stop, nothing is decided any more.
        #expect(machine.claimReplied(.proximity, epoch: 1, error: nil) == [])
        #expect(machine.signal(["HasAccelerometer": .boolean(true)]) == [])
        #expect(machine.propertiesLoaded(allSensors) == [])
        #expect(machine.ownerChanged(to: ":1.9", epoch: 2) == [])
        #expect(machine.settleTimerFired(.light) == [])
        #expect(machine.rereadRequested() == .finish)
        #expect(machine.busSynced() == .finish)
        #expect(machine.waitUntilSettled(2) == [.finishWaiters([2])])

        var live = makeMachine()
        live.liveAll()
        #expect(live.stopRequested() == [.releaseAndClose([.accelerometer, .light, .proximity])])
        var absent = makeMachine()
        _ = absent.ownerChanged(to: nil, epoch: 1)
        #expect(absent.stopRequested() == [.releaseAndClose([])])
    }
}

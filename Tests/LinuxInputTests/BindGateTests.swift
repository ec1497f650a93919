import Testing

@testable import LinuxInput

@Suite struct BindGateTests {
    private let hidPath = "/sys/devices/virtual/misc/uhid/0005:045E:0B13.0001"
    private let interfacePath = "/sys/devices/platform/dummy_hcd.0/usb1/1-1/1-1:1.0"

    private func hid(driverLink: Bool) -> BindGate.Parent {
        BindGate.Parent(syspath: hidPath, subsystem: "hid", hasDriverLink: driverLink)
    }

    @Test func aNodeWithoutAParentDeviceOpensAtOnce() {
        var gate = BindGate()
        #expect(gate.nodeAdded("event3", parent: nil, now: 0) == .openNow)
        #expect(gate.nextDeadline == nil)
    }

    @Test func aNodeOfAnotherSubsystemOpensAtOnce() {
        var gate = BindGate()
        let serio = BindGate.Parent(
            syspath: "/sys/devices/platform/i8042/serio0", subsystem: "serio", hasDriverLink: true)
        #expect(gate.nodeAdded("event0", parent: serio, now: 0) == .openNow)
    }

    @Test func aNodeWaitsWhileItsParentIsBindingAndItsBindReleasesIt() {
        var gate = BindGate()
        #expect(gate.parentEvent(action: "add", syspath: hidPath).isEmpty)
        // The driver core made the driver link before the probe: it does not count as bound.
        #expect(gate.nodeAdded("event7", parent: hid(driverLink: true), now: 0) == .waitForBind(parent: hidPath))
        #expect(gate.isWaiting("event7"))
        #expect(gate.parentEvent(action: "bind", syspath: hidPath) == ["event7"])
        #expect(!gate.isWaiting("event7"))
        #expect(gate.nextDeadline == nil)
    }

    @Test func aBindReleasesOnlyItsOwnNodesInTheOrderTheyCame() {
        var gate = BindGate()
        let interface = BindGate.Parent(syspath: interfacePath, subsystem: "usb", hasDriverLink: true)
        _ = gate.parentEvent(action: "add", syspath: hidPath)
        _ = gate.parentEvent(action: "add", syspath: interfacePath)
        _ = gate.nodeAdded("event9", parent: hid(driverLink: true), now: 0)
        _ = gate.nodeAdded("event8", parent: interface, now: 0)
        _ = gate.nodeAdded("event10", parent: hid(driverLink: true), now: 0)
        #expect(gate.parentEvent(action: "bind", syspath: hidPath) == ["event9", "event10"])
        #expect(gate.isWaiting("event8"))
    }

    @Test func aNodeOfAParentSeenBindingOpensAtOnce() {
        var gate = BindGate()
        _ = gate.parentEvent(action: "add", syspath: hidPath)
        _ = gate.parentEvent(action: "bind", syspath: hidPath)
        #expect(gate.nodeAdded("event7", parent: hid(driverLink: true), now: 0) == .openNow)
    }

    @Test func aParentFromBeforeTheMonitorCountsAsBoundWhenItHasADriverLink() {
        var gate = BindGate()
        #expect(gate.nodeAdded("event7", parent: hid(driverLink: true), now: 0) == .openNow)
    }

    @Test func aParentFromBeforeTheMonitorWithoutADriverLinkIsWaitedFor() {
        var gate = BindGate()
        #expect(gate.nodeAdded("event7", parent: hid(driverLink: false), now: 0) == .waitForBind(parent: hidPath))
    }

    @Test func anUnbindMakesTheNextNodesWaitForTheNextBind() {
        var gate = BindGate()
        _ = gate.parentEvent(action: "bind", syspath: hidPath)
        _ = gate.parentEvent(action: "unbind", syspath: hidPath)
        #expect(gate.nodeAdded("event7", parent: hid(driverLink: true), now: 0) == .waitForBind(parent: hidPath))
        #expect(gate.parentEvent(action: "bind", syspath: hidPath) == ["event7"])
    }

    @Test func aWaitingNodeThatGoesIsForgottenAndNeverReleased() {
        var gate = BindGate()
        _ = gate.parentEvent(action: "add", syspath: hidPath)
        _ = gate.nodeAdded("event7", parent: hid(driverLink: true), now: 0)
        let wasWaiting = gate.nodeRemoved("event7")
        let wasWaitingAgain = gate.nodeRemoved("event7")
        #expect(wasWaiting)
        #expect(!wasWaitingAgain)
        #expect(gate.parentEvent(action: "bind", syspath: hidPath).isEmpty)
    }

    @Test func aParentRemovedBeforeItBoundDropsItsWaitingNodes() {
        var gate = BindGate()
        _ = gate.parentEvent(action: "add", syspath: hidPath)
        _ = gate.nodeAdded("event7", parent: hid(driverLink: true), now: 0)
        _ = gate.parentEvent(action: "remove", syspath: hidPath)
        #expect(!gate.isWaiting("event7"))
        #expect(gate.parents[hidPath] == nil)
    }

    @Test func aNodeWhoseParentNeverBindsIsReleasedAtItsDeadlineAndNotBefore() {
        var gate = BindGate()
        _ = gate.parentEvent(action: "add", syspath: hidPath)
        _ = gate.nodeAdded("event7", parent: hid(driverLink: true), now: 5)
        #expect(gate.nextDeadline == 5 + BindGate.hangNanoseconds)
        #expect(gate.expired(now: 4 + BindGate.hangNanoseconds).isEmpty)
        #expect(gate.expired(now: 5 + BindGate.hangNanoseconds) == ["event7"])
        #expect(gate.nextDeadline == nil)
    }

    @Test func eventsOtherThanAddBindUnbindAndRemoveChangeNothing() {
        var gate = BindGate()
        _ = gate.parentEvent(action: "add", syspath: hidPath)
        _ = gate.nodeAdded("event7", parent: hid(driverLink: true), now: 0)
        #expect(gate.parentEvent(action: "change", syspath: hidPath).isEmpty)
        #expect(gate.parents[hidPath] == .binding)
        #expect(gate.isWaiting("event7"))
    }
}

// How a device is named to the library (`haptics --device`, `lh_engine_create`): the one grammar.
@testable import LinuxHaptics
@testable import LinuxInput
import Testing

@Suite struct DeviceSelectionTests {
    @Test(arguments: [
        ("all", DeviceSelection.allGamepads),
        ("/dev/input/event5", .node("/dev/input/event5")),
        ("/dev/input/by-id/usb-pad-event-joystick", .node("/dev/input/by-id/usb-pad-event-joystick")),
        ("event12", .node("/dev/input/event12")),
        ("usb-045e:028e-1a2b3c4d", .id(StableDeviceID(rawValue: "usb-045e:028e-1a2b3c4d"))),
        ("allpads", .id(StableDeviceID(rawValue: "allpads"))),
    ])
    func aNameSelectsItsDevice(_ name: String, _ selection: DeviceSelection) {
        #expect(DeviceSelection(naming: name) == selection)
    }

    @Test func theEmptyNameSelectsNothing() {
        #expect(DeviceSelection(naming: "") == nil)
    }
}

/// The one rule of which device a selection takes (`DeviceSelection.devicesToOpen`, `accepts`), as the manager's
/// availability, the engine's first open, its re-plug watch and an all-gamepads engine ask it.
@Suite struct DeviceSelectionRuleTests {
    /// A device at `/dev/input/eventN` with the given abilities; its id follows its name and uniq, not its node.
    static func device(
        _ number: Int, name: String = "Pad", uniq: String = "aa:bb", gamepad: Bool = true, rumble: Bool = true,
        access: DeviceAccess = .readWrite, forceDevice: Bool = false
    ) -> InputDevice {
        let identity = InputDeviceIdentity(
            name: name, bus: .usb, vendor: 0x054c, product: 0x0ce6, uniq: uniq, sysName: "event\(number)",
            node: "/dev/input/event\(number)")
        var bits = CapabilityBits()
        if rumble { bits.forceFeedback = EventCodeSet([0x50]) }
        // What a PID joystick's node declares: hid-pidff's FF_PERIODIC, FF_CONSTANT, FF_SINE and FF_GAIN, and the
        // input core's FF_RUMBLE (emulated as a sine).
        if forceDevice { bits.forceFeedback = EventCodeSet([0x50, 0x51, 0x52, 0x5a, 0x60]) }
        return InputDevice(
            id: identity.stableID, identity: identity,
            capabilities: InputDeviceCapabilities(bits: bits, maxEffects: rumble ? 16 : 0), access: access,
            isGamepad: gamepad, gamepadEvidence: .judged, capabilitySource: .evdev, driver: "playstation")
    }

    static let byIDLink = "/dev/input/by-id/usb-Sony_DualSense-event-joystick"
    /// What the file system would answer: the by-id link points at event7, every other path is itself.
    static func resolve(_ path: String) -> String { path == byIDLink ? "/dev/input/event7" : path }

    @Test func aByIDLinkNamesTheNodeItPointsAtForTheManagerTheOpenAndTheWatch() {
        let pad = Self.device(7)
        let selection = DeviceSelection.node(Self.byIDLink).resolvingLinks(Self.resolve)
        #expect(selection == .node("/dev/input/event7"))
        #expect(selection.devicesToOpen(among: [Self.device(3, name: "Other", uniq: "cc"), pad]) == [pad])
        #expect(selection.accepts(pad, bound: nil, adoptingCompatible: false))
        // Unresolved, the link names no device: the mismatch the rule's resolution exists to prevent.
        #expect(DeviceSelection.node(Self.byIDLink).devicesToOpen(among: [pad]).isEmpty)
    }

    @Test func aGamepadWithoutRumbleIsNeverTaken() {
        let silent = Self.device(4, rumble: false)
        for selection in [DeviceSelection.firstRumbleDevice, .allGamepads, .id(silent.id), .node(silent.node)] {
            #expect(selection.devicesToOpen(among: [silent]).isEmpty, "\(selection)")
            #expect(!selection.accepts(silent, bound: nil, adoptingCompatible: true), "\(selection)")
        }
    }

    @Test func aRumbleDeviceThatIsNotAGamepadServesTheFirstDeviceAndANamedOneButNotAllGamepads() {
        let wheel = Self.device(5, name: "Wheel", gamepad: false)
        let pad = Self.device(6)
        #expect(DeviceSelection.firstRumbleDevice.devicesToOpen(among: [wheel]) == [wheel])
        #expect(DeviceSelection.firstRumbleDevice.devicesToOpen(among: [wheel, pad]) == [pad], "gamepads first")
        #expect(DeviceSelection.node(wheel.node).devicesToOpen(among: [wheel, pad]) == [wheel])
        #expect(DeviceSelection.allGamepads.devicesToOpen(among: [wheel, pad]) == [pad])
        #expect(!DeviceSelection.allGamepads.accepts(wheel, bound: nil, adoptingCompatible: false))
        // Adoption replaces a gone pad with another gamepad, never with a wheel.
        #expect(!DeviceSelection.firstRumbleDevice.accepts(wheel, bound: pad.id, adoptingCompatible: true))
    }

    @Test func aForceDeviceIsTakenOnlyWithTheOptInAndNeverAsAnAllGamepadsMemberOrAnAdoptedPad() {
        let stick = Self.device(9, name: "Stick", uniq: "st", forceDevice: true)
        let pad = Self.device(6)
        #expect(stick.forceFeedback.runsWaveformsItself && !pad.forceFeedback.runsWaveformsItself)
        for selection in [DeviceSelection.firstRumbleDevice, .allGamepads, .id(stick.id), .node(stick.node)] {
            #expect(selection.devicesToOpen(among: [stick]).isEmpty, "\(selection)")
            #expect(!selection.accepts(stick, bound: nil, adoptingCompatible: true), "\(selection)")
        }
        #expect(DeviceSelection.node(stick.node).devicesToOpen(among: [stick, pad], forceDevices: true) == [stick])
        #expect(DeviceSelection.id(stick.id).accepts(stick, bound: nil, adoptingCompatible: false, forceDevices: true))
        // With the opt-in, a rumble pad still comes first, and the stick only when no pad is there.
        #expect(DeviceSelection.firstRumbleDevice.devicesToOpen(among: [stick, pad], forceDevices: true) == [pad])
        #expect(DeviceSelection.firstRumbleDevice.devicesToOpen(among: [stick], forceDevices: true) == [stick])
        #expect(DeviceSelection.allGamepads.devicesToOpen(among: [stick, pad], forceDevices: true) == [pad])
        #expect(
            !DeviceSelection.firstRumbleDevice.accepts(
                stick, bound: pad.id, adoptingCompatible: true, forceDevices: true))
    }

    @Test func theFirstDeviceIsTriedAmongEveryDrivablePadThenEveryOtherDrivableDeviceInTurn() {
        let wheel = Self.device(3, name: "Wheel", uniq: "wh", gamepad: false)
        let first = Self.device(5, name: "First Pad", uniq: "p1")
        let locked = Self.device(6, name: "Locked Pad", uniq: "p2", access: .readOnly(reason: "no write permission"))
        let second = Self.device(7, name: "Second Pad", uniq: "p3")
        let devices = [wheel, first, locked, second]
        #expect(DeviceSelection.firstRumbleDevice.devicesInTurn(among: devices) == [first, second, wheel])
        #expect(DeviceSelection.firstRumbleDevice.devicesToOpen(among: devices) == [first])
        // A named device is the only one tried; every gamepad is opened by an all-gamepads engine.
        #expect(DeviceSelection.node(second.node).devicesInTurn(among: devices) == [second])
        #expect(DeviceSelection.id(first.id).devicesInTurn(among: devices) == [first])
        #expect(DeviceSelection.allGamepads.devicesInTurn(among: devices) == [first, second])
    }

    @Test func aDeviceThisProcessMayNotWriteIsNotTakenUntilItMay() {
        let locked = Self.device(8, access: .readOnly(reason: "no write permission"))
        #expect(DeviceSelection.firstRumbleDevice.devicesToOpen(among: [locked]).isEmpty)
        #expect(!DeviceSelection.firstRumbleDevice.accepts(locked, bound: nil, adoptingCompatible: false))
        var granted = locked
        granted.access = .readWrite
        #expect(DeviceSelection.firstRumbleDevice.accepts(granted, bound: nil, adoptingCompatible: false))
    }

    @Test func nothingToOpenIsAPermissionErrorNamingADeviceTheSelectionWouldTakeButMayNotWriteElseNotFound() {
        let locked = Self.device(8, name: "Locked Pad", access: .readOnly(reason: "no write permission"))
        let lockedWheel = Self.device(
            9, name: "Locked Wheel", uniq: "wh", gamepad: false, access: .readOnly(reason: "no write permission"))
        let stick = Self.device(
            10, name: "Locked Stick", uniq: "st", access: .readOnly(reason: "no write permission"), forceDevice: true)
        // Every device this process may not write: all gamepads says so, as the first device does, each naming
        // the first it would have taken.
        let named: [(DeviceSelection, String)] = [
            (.allGamepads, "Locked Pad"), (.firstRumbleDevice, "Locked Wheel"), (.node(locked.node), "Locked Pad"),
            (.id(locked.id), "Locked Pad"),
        ]
        for (selection, name) in named {
            let failure = selection.nothingToOpen(among: [lockedWheel, locked])
            #expect(failure.kind == .permissionDenied && failure.message.contains(name), "\(selection): \(failure)")
        }
        // A device it would not take anyway is no reason: a wheel for all gamepads, another node, a force device
        // without the opt-in.
        #expect(DeviceSelection.allGamepads.nothingToOpen(among: [lockedWheel]).kind == .notFound)
        #expect(DeviceSelection.node("/dev/input/event3").nothingToOpen(among: [locked]).kind == .notFound)
        #expect(DeviceSelection.firstRumbleDevice.nothingToOpen(among: [stick]).kind == .notFound)
        #expect(
            DeviceSelection.firstRumbleDevice.nothingToOpen(among: [stick], forceDevices: true).kind
                == .permissionDenied)
        #expect(DeviceSelection.firstRumbleDevice.nothingToOpen(among: []).kind == .notFound)
    }

    /// A force device this process may drive, without the opt-in, is no device to open, and the failure says why
    /// and how to opt in: `haptics play` said only "no rumble-capable input device found" while `haptics devices`
    /// listed the joystick, until 6 December.
    @Test func nothingToOpenNamesAForceDeviceLeftOutForWantOfTheOptIn() {
        let stick = Self.device(10, name: "PID Stick", uniq: "st", gamepad: false, forceDevice: true)
        for selection in [DeviceSelection.firstRumbleDevice, .node(stick.node), .id(stick.id)] {
            let failure = selection.nothingToOpen(among: [stick])
            #expect(failure.kind == .notFound, "\(selection): \(failure)")
            #expect(
                failure.message.contains("PID Stick (\(stick.node)) is a force-feedback device")
                    && failure.message.contains("--allow-force-devices"), "\(selection): \(failure)")
        }
        // Another node named: the stick is no reason.
        #expect(!DeviceSelection.node("/dev/input/event3").nothingToOpen(among: [stick]).message.contains("PID Stick"))
    }

    /// The pads with what was asked for come first, each group in its order.
    @Test func preferringPutsThePreferredFirstKeepingEachGroupsOrder() {
        let devices = (3...7).map { Self.device($0, name: "Pad \($0)", uniq: "p\($0)") }
        let preferred = DeviceSelection.preferring(devices) {
            [5, 7].contains(Int($0.identity.sysName.dropFirst(5)) ?? 0)
        }
        #expect(preferred.map(\.identity.sysName) == ["event5", "event7", "event3", "event4", "event6"])
        #expect(DeviceSelection.preferring(devices) { _ in false } == devices)
    }

    /// Among pads with the actuators asked for, those this process can drive come first; a pad with them that it
    /// cannot drive still comes before one without (its fallback names the fix), and another kind counts as none.
    @Test func preferringPadsWithTheActuatorsAskedForPutsTheDrivableOnesFirst() {
        let devices = (3...7).map { Self.device($0, name: "Pad \($0)", uniq: "p\($0)") }
        let actuators: [String: HDActuators] = [
            "event3": HDActuators(
                kind: .hdRumble, node: "/dev/hidraw3", writable: false, unavailableReason: "may not write"),
            "event4": HDActuators(kind: .triggerMotors, node: "/dev/hidraw4", writable: true, unavailableReason: nil),
            "event5": HDActuators(kind: .voiceCoils, node: nil, writable: false, unavailableReason: "no node"),
            "event6": HDActuators(kind: .voiceCoils, node: "/dev/hidraw6", writable: true, unavailableReason: nil),
        ]
        let preferred = DeviceSelection.preferring(
            devices, actuators: { actuators[$0.identity.sysName] }, wanted: [.voiceCoils, .hdRumble])
        #expect(preferred.map(\.identity.sysName) == ["event6", "event3", "event5", "event4", "event7"])
        let triggers = DeviceSelection.preferring(
            devices, actuators: { actuators[$0.identity.sysName] }, wanted: [.triggerMotors])
        #expect(triggers.map(\.identity.sysName) == ["event4", "event3", "event5", "event6", "event7"])
    }

    @Test func aReplugAtAnotherNodeIsStillTheBoundPad() {
        let before = Self.device(7)
        let after = Self.device(12)
        #expect(after.id == before.id && after.node != before.node)
        for selection in [DeviceSelection.node(before.node), .id(before.id), .firstRumbleDevice] {
            #expect(selection.accepts(after, bound: before.id, adoptingCompatible: false), "\(selection)")
        }
        // Another pad while the bound one is away: only with adoption.
        let stranger = Self.device(13, name: "Other Pad", uniq: "cc:dd")
        #expect(!DeviceSelection.node(before.node).accepts(stranger, bound: before.id, adoptingCompatible: false))
        #expect(DeviceSelection.node(before.node).accepts(stranger, bound: before.id, adoptingCompatible: true))
    }

    @Test func allGamepadsTakesEveryDrivableGamepadInOrder() {
        let pads = [Self.device(3), Self.device(4, uniq: "x", rumble: false), Self.device(5, uniq: "y")]
        #expect(DeviceSelection.allGamepads.devicesToOpen(among: pads) == [pads[0], pads[2]])
    }
}

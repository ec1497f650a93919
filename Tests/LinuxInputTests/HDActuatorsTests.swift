// Which pads have voice coils, and what is said when they cannot be driven.
import Foundation
import Testing

@testable import LinuxInput

@Suite struct HDActuatorsTests {
    static func identity(vendor: UInt16, product: UInt16, bus: InputBus) -> InputDeviceIdentity {
        InputDeviceIdentity(
            name: "pad", bus: bus, vendor: vendor, product: product, version: 1, uniq: "", phys: "",
            sysName: "event99", node: "/dev/input/event99", sysPath: "/sys/class/input/event99")
    }

    @Test func padsWithoutActuatorsBeyondRumbleHaveNone() {
        #expect(HDActuators.find(identity: Self.identity(vendor: 0x045e, product: 0x028e, bus: .usb)) == nil)
        #expect(HDActuators.find(identity: Self.identity(vendor: 0x054c, product: 0x09cc, bus: .usb)) == nil)
        // An Xbox pad over USB is xpad's: no hidraw node, so no trigger motors we can reach.
        #expect(HDActuators.find(identity: Self.identity(vendor: 0x045e, product: 0x0b13, bus: .usb)) == nil)
    }

    @Test func eachKindIsFoundOnItsPadsAndAddsItsLocalities() {
        let pads: [(UInt16, UInt16, InputBus, HDActuators.Kind)] = [
            (0x054c, 0x0ce6, .bluetooth, .voiceCoils), (0x054c, 0x0df2, .usb, .voiceCoils),
            (0x057e, 0x2009, .usb, .hdRumble), (0x057e, 0x2009, .bluetooth, .hdRumble),
            (0x057e, 0x2006, .bluetooth, .hdRumble), (0x057e, 0x2007, .bluetooth, .hdRumble),
            (0x045e, 0x0b13, .bluetooth, .triggerMotors), (0x045e, 0x02fd, .bluetooth, .triggerMotors),
        ]
        for (vendor, product, bus, kind) in pads {
            #expect(HDActuators.kind(of: Self.identity(vendor: vendor, product: product, bus: bus)) == kind)
        }
        #expect(HDActuators.Kind.triggerMotors.addedLocalities == ["left-trigger", "right-trigger", "triggers"])
        #expect(HDActuators.Kind.hdRumble.addedLocalities.isEmpty)
    }

    /// hid-nintendo binds each Joy-Con in the charging grip (057e:200e) as a pad of its own and names it after its
    /// side; a lone Joy-Con has its own product id. Each has one actuator, fed its own side of a rumble frame.
    @Test func eachLoneJoyConAndEachJoyConInTheGripHasOneActuatorOnItsSide() {
        func pad(_ product: UInt16, _ name: String, _ bus: InputBus = .bluetooth) -> InputDeviceIdentity {
            var identity = Self.identity(vendor: 0x057e, product: product, bus: bus)
            identity.name = name
            return identity
        }
        let pads: [(InputDeviceIdentity, HDActuators.JoyConSide?)] = [
            (pad(0x2006, "Nintendo Switch Left Joy-Con"), .left),
            (pad(0x2007, "Nintendo Switch Right Joy-Con"), .right),
            (pad(0x200e, "Nintendo Switch Left Joy-Con (Grip)", .usb), .left),
            (pad(0x200e, "Nintendo Switch Right Joy-Con (Grip)", .usb), .right),
            (pad(0x2009, "Nintendo Switch Pro Controller", .usb), nil),
            (pad(0x200e, "a grip hid-nintendo did not name", .usb), nil),
        ]
        for (identity, side) in pads {
            #expect(HDActuators.joyConSide(identity) == side, "\(identity.name)")
            #expect(HDActuators.hasOneActuator(identity) == (side != nil), "\(identity.name)")
        }
    }

    @Test func aSwitchOrXboxPadWithoutAHidrawNodeSaysSoAndNamesItsKind() throws {
        for (vendor, product, kind) in [
            (UInt16(0x057e), UInt16(0x2009), HDActuators.Kind.hdRumble),
            (0x045e, 0x0b13, .triggerMotors),
        ] {
            let found = try #require(
                HDActuators.find(identity: Self.identity(vendor: vendor, product: product, bus: .bluetooth)))
            #expect(found.kind == kind && !found.isDrivable)
            #expect(found.unavailableReason?.contains("no hidraw node") == true)
        }
    }

    @Test func aDualSenseOverUSBWithoutASoundCardSaysSo() throws {
        let coils = try #require(
            HDActuators.find(identity: Self.identity(vendor: 0x054c, product: 0x0ce6, bus: .usb)))
        #expect(coils.node == nil && coils.soundCard == nil && !coils.isDrivable)
        #expect(coils.unavailableReason?.contains("no sound card") == true)
    }

    @Test func aDualSenseEdgeOverBluetoothWithoutAHidrawNodeSaysSo() throws {
        let coils = try #require(
            HDActuators.find(identity: Self.identity(vendor: 0x054c, product: 0x0df2, bus: .bluetooth)))
        #expect(!coils.isDrivable)
        #expect(coils.unavailableReason?.contains("no hidraw node") == true)
    }

    /// With a udev daemon, the rule, and the `input` group it gives the node to; with the rule installed already, a
    /// replug (it was made before the rule) or the group (no seat session), not the rule again; without a daemon,
    /// neither (nothing applies them to a new node), but root, the group by hand, or mdev's line.
    @Test func aNodeThatMayNotBeWrittenNamesTheFixThatWorksOnThisSystem() {
        let node = "/dev/hidraw3"
        let withUdev = AccessAdvice.hidrawNode(node, udevDaemonRuns: true, installedRule: nil)
        #expect(withUdev.contains("install the udev rule") && withUdev.contains("`input` group"))
        let installed = AccessAdvice.hidrawNode(
            node, udevDaemonRuns: true, installedRule: "/etc/udev/rules.d/70-haptics-gamepads.rules")
        #expect(!installed.contains("install the udev rule"), "\(installed)")
        #expect(
            installed.contains("is installed (/etc/udev/rules.d/70-haptics-gamepads.rules)")
                && installed.contains("plug the pad in again") && installed.contains("`input` group"), "\(installed)")
        let withoutUdev = AccessAdvice.hidrawNode(node, udevDaemonRuns: false, installedRule: nil)
        #expect(!withoutUdev.contains("udev/70-haptics-gamepads.rules"), "\(withoutUdev)")
        #expect(
            withoutUdev.contains("sudo chgrp input /dev/hidraw3") && withoutUdev.contains(AccessAdvice.mdevHidrawLine))
        #expect(
            AccessAdvice.hidrawNode(node)
                == AccessAdvice.hidrawNode(
                    node, udevDaemonRuns: DeviceDiscovery.udevDaemonIsRunning,
                    installedRule: AccessAdvice.installedRule()))
    }

    @Test func anEventNodeThatMayNotBeOpenedNamesTheFixThatWorksOnThisSystem() {
        let withUdev = AccessAdvice.eventNodes(udevDaemonRuns: true, installedRule: nil)
        #expect(withUdev.contains("sudo make install-udev") && withUdev.contains("usermod -aG input"))
        let installed = AccessAdvice.eventNodes(udevDaemonRuns: true, installedRule: "/lib/udev/rules.d/70-x.rules")
        #expect(!installed.contains("make install-udev"), "\(installed)")
        #expect(
            installed.contains("is installed (/lib/udev/rules.d/70-x.rules)") && installed.contains("replug")
                && installed.contains("usermod -aG input"), "\(installed)")
        let withoutUdev = AccessAdvice.eventNodes(udevDaemonRuns: false, installedRule: "/etc/udev/rules.d/x")
        #expect(!withoutUdev.contains("make install-udev") && !withoutUdev.contains("usermod"), "\(withoutUdev)")
        #expect(withoutUdev.contains("root") && withoutUdev.contains(AccessAdvice.mdevEventLine))
        #expect(
            AccessAdvice.eventNodes()
                == AccessAdvice.eventNodes(
                    udevDaemonRuns: DeviceDiscovery.udevDaemonIsRunning, installedRule: AccessAdvice.installedRule()))
    }

    /// The rule is looked for where udev reads rules, `/etc` first.
    @Test func theInstalledRuleIsFoundInUdevsRuleFolders() {
        #expect(AccessAdvice.installedRule { _ in false } == nil)
        #expect(
            AccessAdvice.installedRule { $0.hasPrefix("/usr/lib/") || $0.hasPrefix("/etc/") }
                == "/etc/udev/rules.d/70-haptics-gamepads.rules")
        #expect(
            AccessAdvice.installedRule { $0 == "/lib/udev/rules.d/70-haptics-gamepads.rules" }
                == "/lib/udev/rules.d/70-haptics-gamepads.rules")
    }
}

/// The sound card of a USB DualSense, found in a sysfs tree laid out as a real pad's: its USB device holds the
/// audio control and streaming interfaces (the card under the first) and the HID interface (the event node).
@Suite struct DualSenseSoundCardTests {
    /// Builds the tree under a fresh folder; returns the event node's sysfs path.
    static func padTree(card: String?) throws -> (root: String, event: String) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("sysfs-\(UUID().uuidString)").path
        let usb = root + "/devices/pci0000:00/0000:00:14.0/usb1/1-2"
        let hid = usb + "/1-2:1.3/0003:054C:0CE6.0004"
        let input = hid + "/input/input9"
        let event = input + "/event7"
        let manager = FileManager.default
        for folder in [event, usb + "/1-2:1.0", usb + "/1-2:1.1", usb + "/1-2:1.2"] {
            try manager.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        if let card {
            try manager.createDirectory(atPath: usb + "/1-2:1.0/sound/" + card, withIntermediateDirectories: true)
        }
        try "054c\n".write(toFile: usb + "/idVendor", atomically: true, encoding: .utf8)
        try manager.createSymbolicLink(atPath: event + "/device", withDestinationPath: "..")
        try manager.createSymbolicLink(atPath: input + "/device", withDestinationPath: "../..")
        return (root, event)
    }

    @Test func theCardUnderThePadsUSBDeviceIsFound() throws {
        let tree = try Self.padTree(card: "card2")
        defer { try? FileManager.default.removeItem(atPath: tree.root) }
        #expect(HDActuators.soundCard(besideEvent: tree.event) == 2)
    }

    @Test func aPadWithoutACardHasNone() throws {
        let tree = try Self.padTree(card: nil)
        defer { try? FileManager.default.removeItem(atPath: tree.root) }
        #expect(HDActuators.soundCard(besideEvent: tree.event) == nil)
    }

    @Test func anEventNodeOutsideAUSBDeviceHasNone() {
        #expect(HDActuators.soundCard(besideEvent: "/sys/devices/virtual/input/input99/event99") == nil)
    }

    /// A /proc with card 3's playback substreams in `statuses` and process 812 named pulseaudio.
    static func procTree(_ statuses: [String]) throws -> String {
        let root = NSTemporaryDirectory() + "proc-\(UUID().uuidString)"
        let manager = FileManager.default
        for (index, status) in statuses.enumerated() {
            let folder = root + "/asound/card3/pcm0p/sub\(index)"
            try manager.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try status.write(toFile: folder + "/status", atomically: true, encoding: .utf8)
        }
        try manager.createDirectory(atPath: root + "/812", withIntermediateDirectories: true)
        try "pulseaudio\n".write(toFile: root + "/812/comm", atomically: true, encoding: .utf8)
        return root
    }

    static let running = "state: RUNNING\nowner_pid   : 812\ntrigger_time: 5.1\n"

    @Test func aCardWhoseOneSubstreamIsOpenIsHeldByItsOwner() throws {
        let proc = try Self.procTree([Self.running])
        defer { try? FileManager.default.removeItem(atPath: proc) }
        let holder = HDActuators.soundCardHolder(card: 3, proc: proc)
        #expect(holder == SoundCardHolder(pid: 812, command: "pulseaudio"))
        #expect(holder?.description == "pulseaudio (pid 812)")
    }

    @Test func aCardWithAFreeSubstreamIsNotHeld() throws {
        let proc = try Self.procTree([Self.running, "closed\n"])
        defer { try? FileManager.default.removeItem(atPath: proc) }
        #expect(HDActuators.soundCardHolder(card: 3, proc: proc) == nil)
    }

    @Test func aCardWithoutPlaybackStatusIsNotHeld() {
        #expect(HDActuators.soundCardHolder(card: 3, proc: "/nonexistent-proc") == nil)
    }
}

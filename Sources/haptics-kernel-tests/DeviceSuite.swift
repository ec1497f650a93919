// The device layer against the real kernel: `haptics probe/devices/monitor` compared with evtest and the
// kernel's own answers for virtual pads of different force-feedback sets, hot-plug through every monitor
// source, stable ids across re-creation, and EventDevice's primitives as the pad records them.
import HapticTestDevices
import CLinuxInput
import CLinuxSystem
import FoundationEssentials
import Glibc
import LinuxHapticsTesting
import LinuxInput
@_spi(Internals) import LinuxSystem
import Logging

enum DeviceSuite {
    static let suite: KernelTestSuite = KernelTestSuite(
        name: "devices", requires: [.uinput],
        tests: probeCases + monitorCases + listingCases + lostEventCases + udevSourceCases)

    static let listingCases: [KernelTest] = [
        KernelTest(name: "devices/lists-pads-not-the-keyboard", body: listsPadsNotTheKeyboard),
        KernelTest(
            name: "devices/listings-opening-no-node-or-only-force-feedback-nodes-agree-with-the-full-one",
            body: listingsOpeningFewerNodesAgreeWithTheFullOne),
        KernelTest(name: "devices/stable-id-survives-recreation", body: stableIDSurvivesRecreation),
        KernelTest(name: "devices/monitor-for-seconds-ends", body: monitorForSecondsEnds),
        KernelTest(name: "devices/monitor-kernel-source-tells-permissions-set-after-the-add-as-changes") {
            try await monitorKernelSourceTellsPermissionChanges(watchQueueLength: nil)
        },
        KernelTest(
            name:
                "devices/monitor-kernel-source-tells-permissions-set-after-the-add-as-changes-when-its-watch-overflowed"
        ) { try await monitorKernelSourceTellsPermissionChanges(watchQueueLength: 0) },
        KernelTest(name: "devices/probe-read-only-and-denied", body: probeReadOnlyAndDenied),
        KernelTest(
            name: "devices/a-node-missing-from-dev-is-listed-with-its-reason-not-the-udev-rule",
            body: missingNodeSaysWhy),
        KernelTest(name: "devices/udev-rule-tags-gamepads-only", body: udevRuleTagsGamepadsOnly),
        KernelTest(name: "devices/event-device-primitives", body: eventDevicePrimitives),
        KernelTest(name: "devices/event-device-full-then-gone", body: eventDeviceFullThenGone),
        KernelTest(
            name: "devices/monitor-udev-source-tells-a-pad-listed-before-the-daemon-processed-it-at-its-add",
            body: udevMonitorTellsAPadListedBeforeTheDaemonProcessedIt),
    ]

    static let lostEventCases: [KernelTest] =
        [DeviceMonitor.Source.kernel, .udev].map { source in
            KernelTest(name: "devices/monitor-finds-the-events-a-full-socket-dropped/\(source.rawValue)") {
                try await monitorFindsWhatAFullSocketDropped(source: source)
            }
        } + [
            KernelTest(
                name: "devices/monitor-tells-a-node-made-again-for-another-pad/inotify-whose-records-were-all-read"
            ) { try await inotifyMonitorTellsANodeMadeAgainForAnotherPad(queueLength: nil) },
            KernelTest(
                name: "devices/monitor-finds-the-events-a-full-queue-dropped/inotify-a-node-made-again-for-another-pad"
            ) { try await inotifyMonitorTellsANodeMadeAgainForAnotherPad(queueLength: 0) },
            KernelTest(
                name:
                    "devices/monitor-finds-the-events-a-full-queue-dropped/inotify-a-node-made-again-in-the-records-before-the-overflow-told-once"
            ) { try await inotifyMonitorTellsANodeMadeAgainForAnotherPad(queueLength: 2) },
            KernelTest(
                name:
                    "devices/monitor-finds-the-events-a-full-queue-dropped/inotify-whose-comparison-failed-tells-the-records-and-compares-a-second-later"
            ) { try await inotifyMonitorTellsANodeMadeAgainForAnotherPad(queueLength: 2, comparisonFails: true) },
        ]
        + [
            KernelTest(
                name:
                    "devices/monitor-finds-the-events-a-full-queue-dropped/inotify-records-read-after-the-comparison-that-told-them-tell-nothing"
            ) { try await inotifyMonitorTellsNothingOfRecordsAComparisonToldBeforeThem() }
        ]
        + [DeviceMonitor.Source.kernel, .udev].map { source in
            KernelTest(
                name:
                    "devices/monitor-finds-the-events-a-full-socket-dropped/\(source.rawValue)-records-read-after-the-comparison-that-told-them-tell-nothing"
            ) { try await netlinkMonitorTellsNothingOfRecordsAComparisonToldBeforeThem(source: source) }
        }
        + [
            KernelTest(
                name:
                    "devices/monitor-finds-the-events-a-full-queue-dropped/inotify-a-node-without-its-file-yet-left-to-its-records-told-once"
            ) { try await inotifyMonitorLeavesANodeWithoutItsFileToItsRecords() },
            KernelTest(
                name:
                    "devices/monitor-finds-the-events-a-full-queue-dropped/inotify-nodes-deleted-before-their-sysfs-folders-told-gone"
            ) { try await inotifyMonitorTellsNodesDeletedBeforeTheirSysfsFoldersGone() },
            KernelTest(name: "devices/monitor-tells-a-node-listed-before-its-file-was-made-changed-not-added/inotify") {
                try await inotifyMonitorTellsANodeListedBeforeItsFileChanged()
            },
        ]
        + DeviceMonitor.Source.allCases.map { source in
            KernelTest(
                name:
                    "devices/monitor-tells-a-node-made-again-for-another-pad/\(source.rawValue)-given-a-snapshot-of-the-gone-pad"
            ) { try await monitorTellsANodeMadeAgainForAnotherPadSinceItsSnapshot(source: source) }
        }

    static let hangGuardSeconds = VirtualPadSuite.hangGuardSeconds

    static func logger() -> Logger {
        var logger = Logger(label: "kernel-tests.devices")
        logger.logLevel = .warning
        return logger
    }

    // MARK: JSON as the CLI prints it (docs/devices.md)

    struct DeviceJSON: Decodable {
        struct ForceFeedback: Decodable {
            let effects: [String]
            let waveforms: [String]
            let gain: Bool
            let autocenter: Bool
            let maxEffects: Int?
        }
        let id: String
        let node: String
        let driver: String?
        let name: String
        let bus: String
        let vendor: String
        let product: String
        let isGamepad: Bool
        let gamepadEvidence: String
        let access: String
        let accessReason: String?
        let capabilitySource: String
        let forceFeedback: ForceFeedback
        let summary: String
        struct HD: Decodable {
            let kind: String
            let node: String?
            let writable: Bool
        }
        let hdActuators: HD?
        let localities: [String]

        /// Every FF code the JSON claims: effect types, waveforms, gain, autocenter.
        var forceFeedbackCodes: Set<UInt16> {
            let names =
                forceFeedback.effects + forceFeedback.waveforms
                + (forceFeedback.gain ? ["gain"] : []) + (forceFeedback.autocenter ? ["autocenter"] : [])
            return Set(names.compactMap { ForceFeedbackFeature(name: $0)?.rawValue })
        }
    }

    struct MonitorLine: Decodable {
        let event: String
        let id: String
        let node: String
        let name: String
        let isGamepad: Bool
        let access: String
    }

    static func decode<T: Decodable>(_ type: T.Type, from text: String, _ what: String) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(text.utf8))
        } catch {
            throw TestFailure(reason: "\(what) is not the documented JSON (\(error)):\n\(text)")
        }
    }

    /// Runs the CLI to completion and returns its output; fails on a non-zero status. `asNobody` runs it
    /// as the unprivileged user `nobody` (busybox `su`; the arguments must not need shell quoting).
    static func haptics(_ arguments: [String], asNobody: Bool = false) throws -> String {
        let command = [projectBinary("haptics")] + arguments
        return try run(asNobody ? ["su", "-s", "/bin/sh", "nobody", "-c", command.joined(separator: " ")] : command)
    }

    static func probe(_ node: String, asNobody: Bool = false) throws -> DeviceJSON {
        try decode(
            DeviceJSON.self, from: try haptics(["probe", "--json", node], asNobody: asNobody), "probe --json \(node)")
    }

    // MARK: probe agrees with evtest and EVIOCGEFFECTS

    static let probeSets: [(label: String, features: Set<ForceFeedbackFeature>, slots: Int)] = [
        ("rumble-gain-4-slots", [.rumble, .gain], 4),
        ("memless-like-16-slots", [.rumble, .periodic, .square, .triangle, .sine, .gain], 16),
        (
            "wheel-40-slots",
            [
                .constant, .periodic, .sine, .sawUp, .sawDown, .spring, .damper, .friction, .inertia, .ramp, .gain,
                .autocenter,
            ], 40
        ),
        ("one-slot-rumble", [.rumble], 1),
    ]

    static let probeCases: [KernelTest] = probeSets.map { set in
        KernelTest(name: "devices/probe-agrees-with-evtest/\(set.label)") {
            try await probeAgreesWithEvtest(features: set.features, slots: set.slots)
        }
    }

    static func probeAgreesWithEvtest(features: Set<ForceFeedbackFeature>, slots: Int) async throws {
        guard onPath("evtest") else { throw TestSkip(.evtest, "evtest is not installed (apt-get install evtest)") }
        let pad = try VirtualPadSuite.makePad(
            VirtualPadConfiguration(name: "Haptics probe pad", features: features, maxEffects: slots))
        defer { pad.destroy() }
        let device = try probe(pad.eventNode)
        let evtestBits = VirtualPadSuite.evtestCodes(
            try VirtualPadSuite.evtestListing(pad.eventNode), eventType: "EV_FF")
        try requireEqual(device.forceFeedbackCodes.sorted(), evtestBits.sorted(), "FF bits of probe --json vs evtest")
        try requireEqual(device.forceFeedback.maxEffects, slots, "maxEffects vs the pad's ff_effects_max")
        try requireEqual(
            device.forceFeedback.maxEffects, try kernelEffectSlots(pad.eventNode), "maxEffects vs EVIOCGEFFECTS")
        try requireEqual(device.node, pad.eventNode, "node")
        try requireEqual(device.name, "Haptics probe pad", "name")
        try requireEqual(device.access, "read-write", "access as root")
        try requireEqual(device.capabilitySource, "evdev", "capability source")
        try require(device.isGamepad, "the pad is not called a gamepad (\(device.gamepadEvidence))")
        // With a udev daemon its ID_INPUT_JOYSTICK decides; without one, our own judgement.
        let udevRuns = access("/run/udev/control", F_OK) == 0
        try requireEqual(device.gamepadEvidence, udevRuns ? "udev" : "judged", "gamepad evidence")
        try require(
            device.id.hasPrefix("\(device.bus)-\(device.vendor):\(device.product)-"),
            "id \(device.id) is not bus-vendor:product-hash")
    }

    /// `EVIOCGEFFECTS` asked directly, not through the library.
    static func kernelEffectSlots(_ node: String) throws -> Int {
        let fd = open(node, O_RDONLY | O_CLOEXEC)
        try require(fd >= 0, "open \(node): \(String(cString: strerror(errno)))")
        defer { close(fd) }
        var count: Int32 = -1
        try require(
            cls_ioctl_ptr(fd, cli_EVIOCGEFFECTS(), &count) == 0, "EVIOCGEFFECTS: \(String(cString: strerror(errno)))")
        return Int(count)
    }

    // MARK: listing

    /// The listings that open fewer nodes than the full one name every node it does, by the same ids and
    /// identities. The engine's (`noNode`) opens none: every node is described from sysfs and `access(2)`, as
    /// opening it tells but where the bits were read and, on a node with force feedback, its effect slots
    /// (unknown). The C library's (`forceFeedbackNodes`) opens only the nodes with force feedback, and describes
    /// the others (the guest's AT keyboard) so.
    static func listingsOpeningFewerNodesAgreeWithTheFullOne() async throws {
        let pad = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics engine-listed pad"))
        defer { pad.destroy() }
        let discovery = DeviceDiscovery(logger: logger())
        func listed(_ probing: DeviceDiscovery.Probing?) throws -> (devices: [InputDevice], opens: Int) {
            SyscallFaults.arm(nil)
            let devices = try probing.map { try discovery.devices(probing: $0) } ?? discovery.devices()
            return (devices, SyscallFaults.disarm().calls["open", default: 0])
        }
        let full = try listed(nil)
        let engines = try listed(.noNode)
        let libraries = try listed(.forceFeedbackNodes)
        func hasForceFeedback(_ device: InputDevice) -> Bool {
            let bits = device.forceFeedback
            return !bits.effects.isEmpty || !bits.waveforms.isEmpty || bits.gain || bits.autocenter
        }
        /// `probed` as a listing that did not open it describes it.
        func unopened(_ probed: InputDevice) -> InputDevice {
            var described = probed
            described.capabilitySource = .sysfs
            if hasForceFeedback(probed) { described.capabilities.forceFeedback.maxEffects = nil }
            return described
        }
        let withForceFeedback = full.devices.filter(hasForceFeedback)
        try require(withForceFeedback.contains { $0.node == pad.eventNode }, "the full listing lacks the pad")
        try require(
            full.devices.contains { !hasForceFeedback($0) },
            "no node without force feedback to compare (the guest's AT keyboard): \(full.devices.map(\.name))")
        for (name, listing) in [("the engine's listing", engines), ("the C library's listing", libraries)] {
            try requireEqual(listing.devices.map(\.id), full.devices.map(\.id), "the ids of \(name)")
            try requireEqual(
                listing.devices.map(\.identity), full.devices.map(\.identity), "the identities of \(name)")
        }
        for (listed, probed) in zip(engines.devices, full.devices) {
            try requireEqual(listed, unopened(probed), "\(probed.name) in the engine's listing")
        }
        for (listed, probed) in zip(libraries.devices, full.devices) {
            let expected = hasForceFeedback(probed) ? probed : unopened(probed)
            try requireEqual(listed, expected, "\(probed.name) in the C library's listing")
        }
        try requireEqual(full.opens, full.devices.count, "event nodes the full listing opened")
        try requireEqual(engines.opens, 0, "event nodes the engine's listing opened")
        try requireEqual(libraries.opens, withForceFeedback.count, "event nodes the C library's listing opened")
    }

    static func listsPadsNotTheKeyboard() async throws {
        let pad = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics listed pad"))
        defer { pad.destroy() }
        let listed = try decode([DeviceJSON].self, from: try haptics(["devices", "--json"]), "devices --json")
        let everything = try decode(
            [DeviceJSON].self, from: try haptics(["devices", "--all", "--json"]), "devices --all --json")
        try require(
            listed.contains { $0.node == pad.eventNode }, "devices --json does not list the pad: \(listed.map(\.node))")
        let keyboards = everything.filter { $0.name.lowercased().contains("keyboard") }
        try require(
            !keyboards.isEmpty,
            "devices --all lists no keyboard; the guest's AT keyboard is missing: \(everything.map(\.name))")
        for keyboard in keyboards {
            try require(!listed.contains { $0.node == keyboard.node }, "devices lists the keyboard \(keyboard.name)")
            try require(!keyboard.isGamepad, "\(keyboard.name) is called a gamepad")
            try requireEqual(keyboard.forceFeedback.maxEffects, 0, "\(keyboard.name)'s effect slots")
        }
        let table = try haptics(["devices"])
        try require(
            table.contains("Haptics listed pad") && table.contains(pad.eventNode), "the table lacks the pad:\n\(table)")
        try require(!keyboards.contains { table.contains($0.name) }, "the table shows a keyboard:\n\(table)")
        let allTable = try haptics(["devices", "--all"])
        try require(
            keyboards.allSatisfy { allTable.contains($0.name) }, "--all does not show the keyboard:\n\(allTable)")
    }

    // MARK: hot-plug

    static let monitorCases: [KernelTest] = [nil, "udev", "kernel", "inotify"].map { source in
        KernelTest(name: "devices/monitor-add-remove/\(source ?? "automatic")") {
            try await monitorReportsAddAndRemove(source: source)
        }
    }

    static func monitorReportsAddAndRemove(source: String?) async throws {
        let udevRuns = access("/run/udev/control", F_OK) == 0
        if source == "udev" && !udevRuns {
            throw TestSkip(.udevd, "no udev daemon in this guest (run the bench with --udevd)")
        }
        let expectedSource = source ?? (udevRuns ? "udev" : "kernel")
        let monitor = try Subprocess(
            [projectBinary("haptics"), "monitor", "--json"] + (source.map { ["--source", $0] } ?? []))
        let ready = "watching input devices (source: \(expectedSource))"
        try require(
            monitor.read(until: { $0.contains(ready) }, timeout: hangGuardSeconds),
            "monitor never said \"\(ready)\":\n\(monitor.text)")

        let name = "Haptics hot-plug pad \(expectedSource)"
        let pad = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: name))
        let node = pad.eventNode
        func line(_ event: String) -> (String) -> Bool {
            { text in monitorLines(text).contains { $0.event == event && $0.node == node } }
        }
        let added = monitor.read(until: line("added"), timeout: hangGuardSeconds)
        pad.destroy()
        let removed = added && monitor.read(until: line("removed"), timeout: hangGuardSeconds)
        monitor.signal(SIGTERM)
        _ = monitor.finish(timeout: hangGuardSeconds)
        try require(added, "monitor (\(expectedSource)) did not report the pad added at \(node):\n\(monitor.text)")
        try require(removed, "monitor (\(expectedSource)) did not report the pad removed:\n\(monitor.text)")
        let lines = monitorLines(monitor.text).filter { $0.node == node }
        let add = lines.first { $0.event == "added" }
        let remove = lines.first { $0.event == "removed" }
        try requireEqual(add?.name, name, "name in the added line")
        try requireEqual(remove?.id, add?.id, "id of the removed line vs the added one")
        try require(add?.isGamepad == true, "the added pad is not called a gamepad")
    }

    /// The JSON lines of the monitor's output (its stderr, merged in, has the "watching" line).
    static func monitorLines(_ text: String) -> [MonitorLine] {
        text.split(separator: "\n").filter { $0.hasPrefix("{") }.compactMap {
            try? JSONDecoder().decode(MonitorLine.self, from: Data($0.utf8))
        }
    }

    /// As `nobody`, with the kernel source (no udev daemon: mdev, or a script, sets a node's permissions after the
    /// kernel announced it, and no uevent tells that): the pad is added without access, and each permission change
    /// that changes what nobody may do is a `changed` line with the new access. Until 6 December nothing followed
    /// the `added` line, so an engine waiting for the pad never heard that it could now open it. With a
    /// `watchQueueLength`, `fs.inotify.max_queued_events` is that while the CLI opens its watch on `/dev/input` (put
    /// back once it is watching): at 0 every attribute change overflows the watch's queue, and the monitor must find
    /// the access changed by comparing each known node's with the access it had; until 7 December it dropped the
    /// overflow, and told nothing.
    static func monitorKernelSourceTellsPermissionChanges(watchQueueLength: Int?) async throws {
        guard onPath("su") else { throw TestSkip(.su, "no su to run the CLI as another user") }
        let limit = "/proc/sys/fs/inotify/max_queued_events"
        let saved = try readFile(limit).trimmingCharacters(in: .whitespacesAndNewlines)
        if let watchQueueLength { try Sys.writeFile(limit, "\(watchQueueLength)") }
        var limitPutBack = watchQueueLength == nil
        defer { if !limitPutBack { try? Sys.writeFile(limit, saved) } }
        let monitor = try Subprocess(
            ["su", "-s", "/bin/sh", "nobody", "-c", "\(projectBinary("haptics")) monitor --json --source kernel"])
        defer {
            monitor.signal(SIGTERM)
            _ = monitor.finish(timeout: hangGuardSeconds)
        }
        let ready = "watching input devices (source: kernel)"
        try require(
            monitor.read(until: { $0.contains(ready) }, timeout: hangGuardSeconds),
            "monitor never said \"\(ready)\":\n\(monitor.text)")
        if !limitPutBack {
            try Sys.writeFile(limit, saved)
            limitPutBack = true
        }
        let pad = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics permission-change pad"))
        defer { pad.destroy() }
        let node = pad.eventNode
        func lines() -> [MonitorLine] { monitorLines(monitor.text).filter { $0.node == node } }
        try require(
            monitor.read(until: { _ in lines().contains { $0.event == "added" } }, timeout: hangGuardSeconds),
            "the pad was never added:\n\(monitor.text)")
        // Made by devtmpfs for root alone; a udev daemon, where one runs, may have opened it up since.
        try require(chmod(node, 0o600) == 0, "chmod 600: \(String(cString: strerror(errno)))")
        // Each step is a change nobody can see, then one it must hear of; the first line for the next step
        // can only be the second's.
        for (mode, access) in [(mode_t(0o666), "read-write"), (0o644, "read-only"), (0o600, "denied")] {
            let told = lines().count
            try require(chmod(node, mode) == 0, "chmod \(String(mode, radix: 8)): \(String(cString: strerror(errno)))")
            try require(
                monitor.read(until: { _ in lines().count > told }, timeout: hangGuardSeconds),
                "no line after chmod \(String(mode, radix: 8)):\n\(monitor.text)")
            let line = lines()[told]
            try requireEqual(line.event, "changed", "event after chmod \(String(mode, radix: 8))")
            try requireEqual(line.access, access, "access after chmod \(String(mode, radix: 8))")
        }
        // Attributes that change nothing nobody sees tell nothing: the next line is the removal.
        let told = lines().count
        try require(chmod(node, 0o600) == 0 && chown(node, 0, 0) == 0, "chmod/chown")
        pad.destroy()
        try require(
            monitor.read(until: { _ in lines().count > told }, timeout: hangGuardSeconds),
            "the removal was not told:\n\(monitor.text)")
        try requireEqual(lines()[told].event, "removed", "the line after a change of nothing nobody sees")
    }

    /// The kernel drops a pad's removal and another's arrival because the monitor's socket is full; once its receive
    /// says ENOBUFS, the monitor finds both by comparing with sysfs. The socket is filled with messages libudev
    /// drops (unicast from no trusted sender, which root may send): a unicast that finds no room is refused to its
    /// sender and drops nothing, so the only events lost are the pads'. The arriving pad mostly takes the leaving
    /// one's `eventN`, under another `inputN`. Until 7 December the monitor told neither.
    static func monitorFindsWhatAFullSocketDropped(source: DeviceMonitor.Source) async throws {
        try TestSkip.unlessUdevDaemonRuns(for: source)
        let leaving = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics lost-removal pad"))
        let leavingNode = leaving.eventNode
        var left = false
        defer { if !left { leaving.destroy() } }
        // The daemon's events for the leaving pad's arrival are sent before the monitor opens.
        if source == .udev { try settleUdev() }
        let (monitor, socket) = try monitorWithItsSocket(source: source, logger: logger())
        let sent = try fillSocket(port: socket.value.port)
        leaving.destroy()
        left = true
        let arriving = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics lost-arrival pad"))
        defer { arriving.destroy() }
        // The daemon's own events for both pads are sent, and dropped, before the monitor reads.
        if source == .udev { try settleUdev() }
        let drops = try ueventSockets()[socket.key]?.drops ?? 0
        try require(drops > 0, "the kernel dropped nothing for the monitor's socket (\(sent) unicasts filled it)")
        let events = try await removalAndArrival(toldBy: monitor).events
        let removal = events.first { $0.kind == .removed && $0.device.name == "Haptics lost-removal pad" }
        try requireEqual(removal?.device.node, leavingNode, "the node of the removal told")
        let arrival = events.first { $0.kind == .added && $0.device.name == "Haptics lost-arrival pad" }
        try requireEqual(arrival?.device.node, arriving.eventNode, "the node of the arrival told")
    }

    /// A pad's node is deleted and another pad's node is made under the same name before the inotify source reads:
    /// the monitor tells the gone pad's removal and the new one's arrival, each once, in order. A node's deletion is
    /// read as an `IN_ATTRIB` (its link count) and then an `IN_DELETE`. With the system's queue length (nil) every
    /// record is read: until 7 December the `IN_ATTRIB` was told as a change of the new pad, under the gone one's
    /// id. With a queue too short, taken from `fs.inotify.max_queued_events` when the monitor opens its inotify
    /// instance, the monitor finds what happened by comparing with sysfs: the node it knows is gone (its sysfs
    /// path names another `inputN` now) and a new one came. At 0 it reads the overflow alone (until 7 December the
    /// comparison went by names only, and told neither). At 2 it reads the gone pad's two records, then the
    /// overflow the new pad's creation brought (a third pad, made and gone, makes sure): until 7 December it
    /// told the records and then the comparison, made against the nodes known before them, and the gone pad's
    /// removal was never told. With `comparisonFails`, the listing of sysfs the overflow calls for fails once: the
    /// monitor tells the records it read (the removal) at once, before the second listing, and compares a second
    /// later (until 7 December it dropped the records and compared at the next overflow alone, and the removal and
    /// the arrival went untold; a monitor that dropped the records and compared a second later told the same events,
    /// so the test checks the listings made by the time each is told). A last pad, made once the two were told,
    /// closes the list of events.
    static func inotifyMonitorTellsANodeMadeAgainForAnotherPad(queueLength: Int?, comparisonFails: Bool = false)
        async throws
    {
        let leaving = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics lost-removal pad"))
        let leavingNode = leaving.eventNode
        var left = false
        defer { if !left { leaving.destroy() } }
        let monitor =
            try queueLength.map { try inotifyMonitor(queueLength: $0) }
            ?? DeviceMonitor(source: .inotify, logger: logger())
        leaving.destroy()
        left = true
        let arriving = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics lost-arrival pad"))
        defer { arriving.destroy() }
        try requireEqual(arriving.eventNode, leavingNode, "the arriving pad's node (the lowest free number)")
        if let queueLength, queueLength > 0 {
            try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics overflowing pad")).destroy()
        }
        // The comparison the overflow calls for fails once (the listing of sysfs): the records read are told, and
        // the comparison is made a second later, with no device event to bring a read.
        if comparisonFails {
            SyscallFaults.arm(.init(site: "udev_enumerate_scan_devices", errno: .noMemory, calls: .nth(1)))
        }
        let told = try await removalAndArrival(toldBy: monitor, thenALastPad: true)
        if comparisonFails {
            try requireEqual(SyscallFaults.disarm().injected, 1, "the failures of the listing of sysfs")
        }
        let (events, lastNode, listings) = told
        if comparisonFails {
            // The removal is told from the records read with the overflow, once the listing they called for failed;
            // the arrival by the comparison made a second later, with the second listing. A monitor that dropped the
            // records on the failed listing and compared a second later would tell both after the second.
            try requireEqual(
                Array(listings.prefix(2)), [1, 2],
                "the listings of sysfs made when the removal and the arrival were told")
        }
        try requireEqual(
            events.map(described),
            [
                "removed Haptics lost-removal pad \(leavingNode)", "added Haptics lost-arrival pad \(leavingNode)",
                "added Haptics last pad \(lastNode ?? "")",
            ],
            "the events told, in order")
    }

    /// An inotify `DeviceMonitor` whose queue holds `queueLength` records: `fs.inotify.max_queued_events` is set to it
    /// while the monitor opens its inotify instance (which keeps the length it opened with), and put back at once.
    static func inotifyMonitor(queueLength: Int) throws -> DeviceMonitor {
        let limit = "/proc/sys/fs/inotify/max_queued_events"
        let saved = try readFile(limit).trimmingCharacters(in: .whitespacesAndNewlines)
        try Sys.writeFile(limit, "\(queueLength)")
        let monitor: DeviceMonitor
        do {
            defer { try? Sys.writeFile(limit, saved) }
            monitor = try DeviceMonitor(source: .inotify, logger: logger())
        }
        try requireEqual(
            try readFile(limit).trimmingCharacters(in: .whitespacesAndNewlines), saved, "the queue length put back")
        return monitor
    }

    /// An inotify monitor, not started, whose queue of 32 overflows after the records of a pad made once it is open
    /// ("Haptics held pad"), with the listing of sysfs armed to fail once: its first read owes a comparison. The
    /// caller destroys the pad and disarms the fault plan. A file made and removed is two records: 40 overflow the queue
    /// after the pad's own (a pad's nodes, its `eventN` and its `jsN`, are each made then given their owner and mode,
    /// two records each); the changes a test then makes (12 records at most) fit in the queue.
    static func monitorOwingAComparison() throws -> (DeviceMonitor, VirtualPad) {
        let monitor = try inotifyMonitor(queueLength: 32)
        let held = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics held pad"))
        let filler = "/dev/input/haptics-filler"
        for _ in 0..<20 {
            let fd = Glibc.open(filler, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            guard fd >= 0, Glibc.close(fd) == 0, unlink(filler) == 0 else {
                let reason = String(cString: strerror(errno))
                held.destroy()
                throw TestFailure(reason: "making and removing \(filler): \(reason)")
            }
        }
        SyscallFaults.arm(.init(site: "udev_enumerate_scan_devices", errno: .noMemory, calls: .nth(1)))
        return (monitor, held)
    }

    /// The records of changes made before a comparison with sysfs, read after it (queued between the read that found
    /// the queue empty and the listing), tell what the comparison told already: they tell nothing. A pad's node is
    /// deleted, another pad made under its name and a third pad made, each of the three as records the monitor reads
    /// only after a comparison found them. The monitor is made to compare then: its queue of 32 records overflows, with
    /// the listing of sysfs failing once (a planned fault, so the comparison is owed), and the monitor thread, telling
    /// the arrival of a pad made before the overflow, is held there while the pads change; the first read after that
    /// finds nothing (a planned `EAGAIN`), so the comparison owed is made with the records still queued. The monitor
    /// must tell the removal and the two arrivals once, then a last pad's. Until 7 December the records read after the
    /// comparison told the second pad removed and added again and the third added again: an engine bound to the second
    /// was interrupted for nothing.
    static func inotifyMonitorTellsNothingOfRecordsAComparisonToldBeforeThem() async throws {
        var leaving: VirtualPad? = try VirtualPadSuite.makePad(
            VirtualPadConfiguration(name: "Haptics lost-removal pad"))
        let leavingNode = leaving?.eventNode ?? ""
        defer { leaving?.destroy() }
        let (monitor, held) = try monitorOwingAComparison()
        defer {
            held.destroy()
            SyscallFaults.disarm()
        }
        let events = Lock<[DeviceEvent]>([])
        let holding = Lock(false)
        let release = DeadlineWaiter()
        guard
            let subscription = monitor.start(
                { event in
                    events.withLock { $0.append(event) }
                    guard event.kind == .added, event.device.name == "Haptics held pad" else { return }
                    holding.withLock { $0 = true }
                    release.wait(
                        untilNanoseconds: Sys.monotonicNanoseconds() + UInt64(hangGuardSeconds * 1_000_000_000))
                }, ended: { _ in })
        else { throw TestFailure(reason: "the monitor did not start") }
        defer {
            release.signal()
            subscription.stop()
        }
        try await waitUntil("the monitor to tell the held pad's arrival", toldIn: { events.withLock { $0 } }) {
            holding.withLock { $0 }
        }
        try requireEqual(SyscallFaults.disarm().injected, 1, "the failures of the listing of sysfs")
        // The pads are made and destroyed by this thread, exempt, so that the read failing is the monitor's.
        SyscallFaults.arm(.init(site: "read", errno: .wouldBlock, calls: .nth(1)))
        let (arriving, new) = try SyscallFaults.exempting {
            leaving?.destroy()
            leaving = nil
            return (
                try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics lost-arrival pad")),
                try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics new pad"))
            )
        }
        defer {
            arriving.destroy()
            new.destroy()
        }
        try requireEqual(arriving.eventNode, leavingNode, "the arriving pad's node (the lowest free number)")
        release.signal()
        let last = try await theRemovalAndTwoArrivalsThenALastPad(toldIn: { events.withLock { $0 } }) {
            try requireEqual(SyscallFaults.disarm().injected, 1, "the monitor's reads that found nothing")
        }
        defer { last.destroy() }
        try requireEqual(
            events.withLock { $0 }.map(described),
            [
                "added Haptics held pad \(held.eventNode)", "removed Haptics lost-removal pad \(leavingNode)",
                "added Haptics lost-arrival pad \(leavingNode)", "added Haptics new pad \(new.eventNode)",
                "added Haptics last pad \(last.eventNode)",
            ],
            "the events told, in order")
    }

    /// The netlink sources' events of changes made before a comparison with sysfs, read after it (sent between the
    /// drain that found the socket empty and the listing), tell what the comparison told already: they tell nothing.
    /// The monitor owes a comparison: its socket, filled with unicasts, drops a pad's events, and the listing of sysfs
    /// the overflow calls for fails (a planned fault). The comparison is made again a second later, on a socket found
    /// empty; the monitor thread is held as it says so (its log), before the listing, while a known pad's node is
    /// deleted, another pad made under its name and a third pad made. The monitor must tell the removal and the two
    /// arrivals once, then a last pad's. Until 7 December the gone pad's `remove`, read after the comparison, removed
    /// the new pad under that name, and its `add` added it again, with the third's: an engine bound to the new pad was
    /// interrupted and reset for nothing.
    static func netlinkMonitorTellsNothingOfRecordsAComparisonToldBeforeThem(source: DeviceMonitor.Source)
        async throws
    {
        try TestSkip.unlessUdevDaemonRuns(for: source)
        var leaving: VirtualPad? = try VirtualPadSuite.makePad(
            VirtualPadConfiguration(name: "Haptics lost-removal pad"))
        let leavingNode = leaving?.eventNode ?? ""
        defer { leaving?.destroy() }
        if source == .udev { try settleUdev() }
        let holding = Lock(false)
        let release = DeadlineWaiter()
        let log = RecordingLog { _, message in
            guard message.hasPrefix("comparing with sysfs again"), !holding.withLock({ $0 }) else { return }
            holding.withLock { $0 = true }
            release.wait(untilNanoseconds: Sys.monotonicNanoseconds() + UInt64(hangGuardSeconds * 1_000_000_000))
        }
        let (monitor, socket) = try monitorWithItsSocket(source: source, logger: log.logger)
        _ = try fillSocket(port: socket.value.port)
        try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics dropped pad")).destroy()
        if source == .udev { try settleUdev() }
        try require((try ueventSockets()[socket.key]?.drops ?? 0) > 0, "the kernel dropped nothing for the monitor")
        SyscallFaults.arm(.init(site: "udev_enumerate_scan_devices", errno: .noMemory, calls: .nth(1)))
        defer { SyscallFaults.disarm() }
        let events = Lock<[DeviceEvent]>([])
        guard let subscription = monitor.start({ event in events.withLock { $0.append(event) } }, ended: { _ in })
        else { throw TestFailure(reason: "the monitor did not start") }
        defer {
            release.signal()
            subscription.stop()
        }
        try await waitUntil("the monitor to compare again, before its listing", toldIn: { events.withLock { $0 } }) {
            holding.withLock { $0 }
        }
        try requireEqual(SyscallFaults.disarm().injected, 1, "the failures of the listing of sysfs")
        leaving?.destroy()
        leaving = nil
        let arriving = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics lost-arrival pad"))
        let new = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics new pad"))
        defer {
            arriving.destroy()
            new.destroy()
        }
        try requireEqual(arriving.eventNode, leavingNode, "the arriving pad's node (the lowest free number)")
        // The daemon's events are sent, and its database written, before the listing: the comparison tells the pads.
        if source == .udev { try settleUdev() }
        release.signal()
        let last = try await theRemovalAndTwoArrivalsThenALastPad(toldIn: { events.withLock { $0 } })
        defer { last.destroy() }
        try requireEqual(
            events.withLock { $0 }.map(described),
            [
                "removed Haptics lost-removal pad \(leavingNode)", "added Haptics lost-arrival pad \(leavingNode)",
                "added Haptics new pad \(new.eventNode)", "added Haptics last pad \(last.eventNode)",
            ],
            "the events told, in order")
    }

    /// An inotify monitor held as it tells the arrival of a pad made before its queue overflowed ("Haptics held pad",
    /// `monitorOwingAComparison`: the comparison is owed), and released by the returned waiter. `events` collects what
    /// it tells; `waitUntil` waits for a condition, failing with the events told so far.
    static func heldInotifyMonitor() throws -> HeldMonitor {
        let (monitor, held) = try monitorOwingAComparison()
        let state = HeldMonitor(held: held)
        guard
            let subscription = monitor.start(
                { event in
                    state.events.withLock { $0.append(event) }
                    guard event.kind == .added, event.device.name == "Haptics held pad" else { return }
                    state.holding.withLock { $0 = true }
                    state.release.wait(
                        untilNanoseconds: Sys.monotonicNanoseconds() + UInt64(hangGuardSeconds * 1_000_000_000))
                }, ended: { _ in })
        else {
            state.end()
            throw TestFailure(reason: "the monitor did not start")
        }
        state.subscription.withLock { $0 = subscription }
        return state
    }

    /// A monitor started by `heldInotifyMonitor`. `end()` releases and stops it, destroys the held pad and disarms the
    /// fault plan.
    final class HeldMonitor: Sendable {
        let held: VirtualPad
        let events = Lock<[DeviceEvent]>([])
        let holding = Lock(false)
        let release = DeadlineWaiter()
        let subscription = Lock<DeviceMonitor.Subscription?>(nil)

        init(held: VirtualPad) { self.held = held }

        func end() {
            release.signal()
            subscription.withLock { $0 }?.stop()
            held.destroy()
            SyscallFaults.disarm()
        }

        func told(_ kind: DeviceEvent.Kind, _ name: String) -> Bool {
            events.withLock { $0.contains { $0.kind == kind && $0.device.name == name } }
        }

        func waitUntil(_ what: String, _ condition: @escaping @Sendable () -> Bool) async throws {
            do {
                try await AppSuite.waitUntil(what, condition)
            } catch {
                throw TestFailure(reason: "\(error); told: \(events.withLock { $0 }.map(described))")
            }
        }

        /// Waits until the monitor is held, with the listing of sysfs failed once: the comparison is owed.
        func waitUntilHeld() async throws {
            try await waitUntil("the monitor to tell the held pad's arrival") { self.holding.withLock { $0 } }
            try requireEqual(SyscallFaults.disarm().injected, 1, "the failures of the listing of sysfs")
        }
    }

    /// A comparison made while sysfs lists a new pad and `/dev/input` has no file for it yet (the kernel makes the
    /// device's sysfs folder, then devtmpfs its node) leaves the pad to its records, and the records of a pad gone under
    /// the same `eventN`, read after the comparison told its removal, tell nothing. The window is stood in for by moving
    /// the new pad's node out of `/dev/input` (under a name that makes no record of its own), and back only once the
    /// monitor told a last pad's arrival: every record of the two pads is read while the new pad has no file, as the
    /// gone pad's can be before devtmpfs makes the new node. Set up as
    /// `inotifyMonitorTellsNothingOfRecordsAComparisonToldBeforeThem`: while the monitor is held, owing a comparison, the
    /// known pad is destroyed and the new pad made; the monitor's next read finds nothing (a planned `EAGAIN`), so the
    /// comparison is made with the records still queued. The monitor must tell the removal, the last pad's arrival,
    /// then the new pad's, once, when its node is back. Until 7 December the comparison told the new pad added (as
    /// waiting for its file), the gone pad's deletion record removed it, and its own records added and removed it again.
    static func inotifyMonitorLeavesANodeWithoutItsFileToItsRecords() async throws {
        var leaving: VirtualPad? = try VirtualPadSuite.makePad(
            VirtualPadConfiguration(name: "Haptics lost-removal pad"))
        let leavingNode = leaving?.eventNode ?? ""
        defer { leaving?.destroy() }
        let monitor = try heldInotifyMonitor()
        defer { monitor.end() }
        try await monitor.waitUntilHeld()
        SyscallFaults.arm(.init(site: "read", errno: .wouldBlock, calls: .nth(1)))
        // The pads are made and destroyed by this thread, exempt, so that the read failing is the monitor's.
        let new = try SyscallFaults.exempting {
            leaving?.destroy()
            leaving = nil
            return try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics new pad"))
        }
        defer { new.destroy() }
        try requireEqual(new.eventNode, leavingNode, "the new pad's node (the lowest free number)")
        let stash = "/dev/input/haptics-stash"
        try require(rename(new.eventNode, stash) == 0, "rename out")
        var movedBack = false
        defer { if !movedBack { _ = rename(stash, new.eventNode) } }
        monitor.release.signal()
        try await monitor.waitUntil("the monitor to tell the removal") {
            monitor.told(.removed, "Haptics lost-removal pad")
        }
        try requireEqual(SyscallFaults.disarm().injected, 1, "the monitor's reads that found nothing")
        let last = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics last pad"))
        defer { last.destroy() }
        try await monitor.waitUntil("the last pad's arrival") { monitor.told(.added, "Haptics last pad") }
        try require(rename(stash, new.eventNode) == 0, "rename back")
        movedBack = true
        try await monitor.waitUntil("the new pad's arrival") { monitor.told(.added, "Haptics new pad") }
        try requireEqual(
            monitor.events.withLock { $0 }.map(described),
            [
                "added Haptics held pad \(monitor.held.eventNode)", "removed Haptics lost-removal pad \(leavingNode)",
                "added Haptics last pad \(last.eventNode)", "added Haptics new pad \(new.eventNode)",
            ],
            "the events told, in order")
    }

    /// The kernel deletes a device's node before its sysfs folder: a comparison made in between, with the node's
    /// deletion record among the records it stands for, tells the pad removed by its file, gone from `/dev/input`, and
    /// does not add a pad plugged in and unplugged at once whose sysfs folder lingers. The window is stood in for by
    /// deleting the nodes by hand while the monitor is held owing a comparison (`heldInotifyMonitor`): a known pad's, and
    /// a pad's made then; both pads are destroyed only at the end (a pad made under the `eventN` of one would tell its
    /// removal, as a node made again). The monitor must tell the known pad's removal, then a last pad's arrival. Until 7 December the comparison kept the known pad, which sysfs
    /// still listed, and its removal was never told, and it told the other pad added, never removed.
    static func inotifyMonitorTellsNodesDeletedBeforeTheirSysfsFoldersGone() async throws {
        let leaving = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics lost-removal pad"))
        defer { leaving.destroy() }
        let monitor = try heldInotifyMonitor()
        defer { monitor.end() }
        try await monitor.waitUntilHeld()
        let brief = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics brief pad"))
        defer { brief.destroy() }
        try require(unlink(leaving.eventNode) == 0, "deleting \(leaving.eventNode)")
        try require(unlink(brief.eventNode) == 0, "deleting \(brief.eventNode)")
        monitor.release.signal()
        try await monitor.waitUntil("the monitor to compare") {
            monitor.told(.removed, "Haptics lost-removal pad") || monitor.told(.added, "Haptics brief pad")
        }
        let last = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics last pad"))
        defer { last.destroy() }
        try await monitor.waitUntil("the last pad's arrival") { monitor.told(.added, "Haptics last pad") }
        try requireEqual(
            monitor.events.withLock { $0 }.map(described),
            [
                "added Haptics held pad \(monitor.held.eventNode)",
                "removed Haptics lost-removal pad \(leaving.eventNode)", "added Haptics last pad \(last.eventNode)",
            ],
            "the events told, in order")
    }

    /// A node the inotify monitor's own listing found in sysfs before devtmpfs made its file (stood in for by moving the
    /// node out of `/dev/input` while the monitor opens, under a name that makes no record of its own) is one of
    /// `initialDevices`, denied for want of a file; its creation record (the move back) tells its access changed, not
    /// the pad added again. A last pad's arrival closes the list. Until 7 December the pad was told added twice.
    static func inotifyMonitorTellsANodeListedBeforeItsFileChanged() async throws {
        let pad = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics early pad"))
        defer { pad.destroy() }
        // The daemon, where one runs, is done with the node before it moves.
        if DeviceDiscovery.udevDaemonIsRunning { try settleUdev() }
        let stash = "/dev/input/haptics-stash"
        try require(rename(pad.eventNode, stash) == 0, "rename out")
        var movedBack = false
        defer { if !movedBack { _ = rename(stash, pad.eventNode) } }
        let monitor = try DeviceMonitor(source: .inotify, logger: logger())
        guard let listed = monitor.initialDevices.first(where: { $0.identity.node == pad.eventNode }) else {
            throw TestFailure(reason: "the monitor's listing does not name \(pad.eventNode)")
        }
        try requireEqual(listed.access.name, "denied", "the access listed without a file")
        try require(rename(stash, pad.eventNode) == 0, "rename back")
        movedBack = true
        let events = Lock<[DeviceEvent]>([])
        guard let subscription = monitor.start({ event in events.withLock { $0.append(event) } }, ended: { _ in })
        else { throw TestFailure(reason: "the monitor did not start") }
        defer { subscription.stop() }
        let last = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics last pad"))
        defer { last.destroy() }
        try await AppSuite.waitUntil("the last pad's arrival") {
            events.withLock { $0.contains { $0.kind == .added && $0.device.name == "Haptics last pad" } }
        }
        let told = events.withLock { $0 }
        try requireEqual(
            told.map(described),
            ["changed Haptics early pad \(pad.eventNode)", "added Haptics last pad \(last.eventNode)"],
            "the events told, in order")
        try requireEqual(told[0].device.access, .readWrite, "the early pad's access once it has its file")
        try requireEqual(told[0].device.id, listed.id, "the early pad's id")
    }

    /// A monitor given a snapshot listed before its source opened (as an engine's is) hears nothing of a pad gone in
    /// between, as it hears nothing of one whose events the kernel dropped from a full socket or queue while sysfs
    /// could not be listed. Another pad made then under the same `eventN` is told as the gone pad's removal, under the
    /// gone pad's id, and the new pad's arrival, under its own. Until 7 December the new pad was told added under the
    /// gone pad's id, and the removal never (an engine bound to the gone pad, which finds removals by id, never heard
    /// it). A last pad, made once the two were told, closes the list of events.
    static func monitorTellsANodeMadeAgainForAnotherPadSinceItsSnapshot(source: DeviceMonitor.Source) async throws {
        try TestSkip.unlessUdevDaemonRuns(for: source)
        let leaving = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics lost-removal pad"))
        let leavingNode = leaving.eventNode
        var left = false
        defer { if !left { leaving.destroy() } }
        if source == .udev { try settleUdev() }
        let snapshot = try DeviceDiscovery(logger: logger()).devices(probing: .noNode)
        guard let gone = snapshot.first(where: { $0.identity.node == leavingNode }) else {
            throw TestFailure(reason: "the snapshot does not list the pad at \(leavingNode)")
        }
        leaving.destroy()
        left = true
        // The daemon's events for the gone pad are sent before the monitor opens.
        if source == .udev { try settleUdev() }
        let monitor = try DeviceMonitor(source: source, snapshot: snapshot, logger: logger())
        let arriving = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics lost-arrival pad"))
        defer { arriving.destroy() }
        try requireEqual(arriving.eventNode, leavingNode, "the arriving pad's node (the lowest free number)")
        let (events, lastNode, _) = try await removalAndArrival(toldBy: monitor, thenALastPad: true)
        try requireEqual(
            events.map(described),
            [
                "removed Haptics lost-removal pad \(leavingNode)", "added Haptics lost-arrival pad \(leavingNode)",
                "added Haptics last pad \(lastNode ?? "")",
            ],
            "the events told, in order")
        try requireEqual(events[0].device.id, gone.id, "the id of the gone pad's removal")
        try requireEqual(events[1].device.id, events[1].device.identity.stableID, "the id of the new pad's arrival")
    }

    /// A udev monitor whose listing (its snapshot) saw a pad the daemon had not processed yet (its event queue held)
    /// tells the pad added when the daemon's `add` comes: that is when the pad's rules, permissions and links are in
    /// place (an engine named by a `/dev/input/by-id` link waits for it). On 7 December, for a few hours, the `add`
    /// of a pad listed already was taken for one told already, and nothing was told.
    static func udevMonitorTellsAPadListedBeforeTheDaemonProcessedIt() async throws {
        try await withAPadTheDaemonHasNotProcessed(named: "Haptics unprocessed pad") { pad, letGo in
            let monitor = try DeviceMonitor(source: .udev, logger: logger())
            try require(
                monitor.initialDevices.contains { $0.identity.node == pad.eventNode },
                "the monitor's listing does not hold the pad the daemon has not processed")
            let events = Lock<[DeviceEvent]>([])
            guard let subscription = monitor.start({ event in events.withLock { $0.append(event) } }, ended: { _ in })
            else { throw TestFailure(reason: "the monitor did not start") }
            defer { subscription.stop() }
            try letGo()
            do {
                try await AppSuite.waitUntil("the monitor to tell the pad added once the daemon processed it") {
                    events.withLock { $0.contains { $0.kind == .added && $0.device.name == "Haptics unprocessed pad" } }
                }
            } catch {
                throw TestFailure(reason: "\(error); told: \(events.withLock { $0 }.map(described))")
            }
        }
    }

    /// Waits until `events` hold `condition`; a wait that times out names the events told.
    static func waitUntil(
        _ what: String, toldIn events: @escaping @Sendable () -> [DeviceEvent],
        _ condition: @escaping @Sendable () -> Bool
    ) async throws {
        do {
            try await AppSuite.waitUntil(what, condition)
        } catch {
            throw TestFailure(reason: "\(error); told: \(events().map(described))")
        }
    }

    /// Waits until `events` hold the removal of "Haptics lost-removal pad" and the arrivals of "Haptics lost-arrival
    /// pad" and "Haptics new pad", runs `between`, then makes "Haptics last pad" and waits for its arrival, which
    /// closes the list of events: the last pad, for the caller to destroy once it has read them.
    static func theRemovalAndTwoArrivalsThenALastPad(
        toldIn events: @escaping @Sendable () -> [DeviceEvent], between: () throws -> Void = {}
    ) async throws -> VirtualPad {
        @Sendable func told(_ kind: DeviceEvent.Kind, _ name: String) -> Bool {
            events().contains { $0.kind == kind && $0.device.name == name }
        }
        try await waitUntil("the monitor to tell the removal and the two arrivals", toldIn: events) {
            told(.removed, "Haptics lost-removal pad") && told(.added, "Haptics lost-arrival pad")
                && told(.added, "Haptics new pad")
        }
        try between()
        return try await aLastPadTold(in: events)
    }

    /// Starts `monitor` and waits until it has told the removal of the pad "Haptics lost-removal pad" and the arrival
    /// of "Haptics lost-arrival pad" (whose events were mostly lost); with `thenALastPad`, then makes the pad "Haptics
    /// last pad" and waits for its arrival too, so that every event told of the first two is in. Returns every event
    /// told by then, the last pad's node, and, for each event, how many listings of sysfs had been made by the time it
    /// was told (counted while a fault plan is armed; 0 otherwise).
    static func removalAndArrival(
        toldBy monitor: DeviceMonitor, thenALastPad: Bool = false
    ) async throws -> (events: [DeviceEvent], lastNode: String?, listings: [Int]) {
        let events = Lock<[DeviceEvent]>([])
        let listings = Lock<[Int]>([])
        guard
            let subscription = monitor.start(
                { event in
                    listings.withLock {
                        $0.append(SyscallFaults.tally.calls["udev_enumerate_scan_devices", default: 0])
                    }
                    events.withLock { $0.append(event) }
                }, ended: { _ in })
        else { throw TestFailure(reason: "the monitor did not start") }
        defer { subscription.stop() }
        @Sendable func told(_ kind: DeviceEvent.Kind, _ name: String) -> Bool {
            events.withLock { $0.contains { $0.kind == kind && $0.device.name == name } }
        }
        func waitUntil(_ what: String, _ condition: @escaping @Sendable () -> Bool) async throws {
            do {
                try await AppSuite.waitUntil(what, condition)
            } catch {
                throw TestFailure(reason: "\(error); told: \(events.withLock { $0 }.map(described))")
            }
        }
        try await waitUntil("the monitor to tell the removal and the arrival") {
            told(.removed, "Haptics lost-removal pad") && told(.added, "Haptics lost-arrival pad")
        }
        guard thenALastPad else { return (events.withLock { $0 }, nil, listings.withLock { $0 }) }
        let last = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics last pad"))
        defer { last.destroy() }
        try await waitUntil("the monitor to tell the last pad's arrival") { told(.added, "Haptics last pad") }
        return (events.withLock { $0 }, last.eventNode, listings.withLock { $0 })
    }

    /// An event as the lost-event tests compare it: its kind, the pad's name and its node.
    static func described(_ event: DeviceEvent) -> String { "\(event.kind) \(event.device.name) \(event.device.node)" }

    /// Waits until the udev daemon has handled every uevent sent so far.
    static func settleUdev() throws {
        let settle = try Subprocess(["udevadm", "settle", "--timeout=10"])
        try requireEqual(settle.finish(timeout: hangGuardSeconds), 0, "udevadm settle (\(settle.text))")
    }

    /// The uevent netlink sockets (protocol 15) this process holds, by inode: each one's port id and how many
    /// messages the kernel dropped for it (`/proc/net/netlink`).
    static func ueventSockets() throws -> [String: (port: UInt32, drops: Int)] {
        let inodes = Set(
            try Sys.directoryEntries("/proc/self/fd").compactMap { fd -> String? in
                guard let target = try? Sys.readLink("/proc/self/fd/\(fd)"), target.hasPrefix("socket:[") else {
                    return nil
                }
                return String(target.dropFirst("socket:[".count).dropLast())
            })
        var sockets: [String: (port: UInt32, drops: Int)] = [:]
        // sk, protocol, port id, groups, rmem, wmem, dump, locks, drops, inode.
        for line in try readFile("/proc/net/netlink").split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count >= 10, fields[1] == "15", inodes.contains(fields[9]), let port = UInt32(fields[2])
            else { continue }
            sockets[fields[9]] = (port, Int(fields[8]) ?? 0)
        }
        return sockets
    }

    /// A `DeviceMonitor` of a netlink source, and the one uevent socket it opened (`ueventSockets`' key and value);
    /// given `snapshot` as the present devices (as an engine's monitor is, listed without opening a node), when one is.
    static func monitorWithItsSocket(
        source: DeviceMonitor.Source, snapshot: [InputDevice]? = nil, logger: Logger
    ) throws -> (DeviceMonitor, socket: (key: String, value: (port: UInt32, drops: Int))) {
        let before = try ueventSockets()
        let monitor = try DeviceMonitor(source: source, snapshot: snapshot, logger: logger)
        let opened = try ueventSockets().filter { before[$0.key] == nil }
        guard opened.count == 1, let socket = opened.first else {
            throw TestFailure(reason: "the monitor opened \(opened.count) uevent sockets, not one")
        }
        return (monitor, (socket.key, socket.value))
    }

    /// Sends 2 KiB unicasts to the netlink socket of `port` until it has no room; returns how many it took.
    static func fillSocket(port: UInt32) throws -> Int { try sendUnicasts(port: port, upTo: .max) }

    /// Sends 2 KiB unicasts to the netlink socket of `port`, `limit` of them or until it has no room; returns how many
    /// it took. libudev drops each (from no trusted sender).
    static func sendUnicasts(port: UInt32, upTo limit: Int) throws -> Int {
        let sender = Glibc.socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 15)
        try require(sender >= 0, "netlink socket: \(String(cString: strerror(errno)))")
        defer { Glibc.close(sender) }
        // `struct sockaddr_nl`: the family (16 bits), padding, the port id (32 bits), the groups (none: unicast).
        var address = [UInt8](repeating: 0, count: 12)
        address.withUnsafeMutableBytes { bytes in
            bytes.storeBytes(of: sa_family_t(AF_NETLINK), toByteOffset: 0, as: sa_family_t.self)
            bytes.storeBytes(of: port, toByteOffset: 4, as: UInt32.self)
        }
        let message = [UInt8](repeating: 0, count: 2048)
        var sent = 0
        while sent < limit {
            let result = address.withUnsafeBytes { bytes in
                sendto(
                    sender, message, message.count, Int32(MSG_DONTWAIT),
                    bytes.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(bytes.count))
            }
            if result < 0 {
                try require(errno == EAGAIN, "unicast to the monitor: \(String(cString: strerror(errno)))")
                return sent
            }
            sent += 1
        }
        return sent
    }

    static func monitorForSecondsEnds() async throws {
        let monitor = try Subprocess([projectBinary("haptics"), "monitor", "--for", "1"])
        // Only a hang reaches the guard: --for must end the command by itself.
        let status = monitor.finish(timeout: hangGuardSeconds)
        try requireEqual(status, 0, "exit status of monitor --for 1 (output:\n\(monitor.text))")
    }

    // MARK: stable id

    static func stableIDSurvivesRecreation() async throws {
        let configuration = VirtualPadConfiguration(name: "Haptics stable pad", product: 0x0002)
        let first = try VirtualPadSuite.makePad(configuration)
        let firstNode = first.eventNode
        let firstID = try probe(firstNode).id
        first.destroy()
        // The kernel reuses the lowest free event number: a filler takes the old one, so the same pad
        // comes back on another node, as after a replug.
        let filler = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics filler pad", product: 0x0003))
        defer { filler.destroy() }
        let second = try VirtualPadSuite.makePad(configuration)
        defer { second.destroy() }
        try require(
            second.eventNode != firstNode, "the re-created pad got the same node \(firstNode); the test proves nothing")
        try requireEqual(try probe(second.eventNode).id, firstID, "id of the re-created pad")
        try require(try probe(filler.eventNode).id != firstID, "another pad got the same id")
    }

    // MARK: access

    /// As an unprivileged user: a node readable but not writable is probed read-only; a node not
    /// readable at all is listed as denied, with its force-feedback bits from sysfs.
    static func probeReadOnlyAndDenied() async throws {
        guard onPath("su") else { throw TestSkip(.su, "no su to run the CLI as another user") }
        let pad = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics guarded pad"))
        defer { pad.destroy() }
        let expected = try probe(pad.eventNode)

        try require(chmod(pad.eventNode, 0o644) == 0, "chmod 644: \(String(cString: strerror(errno)))")
        let readOnly = try probe(pad.eventNode, asNobody: true)
        try requireEqual(readOnly.access, "read-only", "access with mode 644")
        try require(
            readOnly.accessReason?.contains("Permission denied") == true, "reason: \(readOnly.accessReason ?? "none")")
        try requireEqual(readOnly.forceFeedback.maxEffects, expected.forceFeedback.maxEffects, "slots read-only")
        try require(readOnly.summary.contains("read-only"), "summary does not say read-only: \(readOnly.summary)")

        try require(chmod(pad.eventNode, 0o600) == 0, "chmod 600: \(String(cString: strerror(errno)))")
        let denied = try probe(pad.eventNode, asNobody: true)
        try requireEqual(denied.access, "denied", "access with mode 600")
        try requireEqual(denied.capabilitySource, "sysfs", "capability source when denied")
        try requireEqual(denied.forceFeedbackCodes, expected.forceFeedbackCodes, "FF bits from sysfs vs from evdev")
        try requireEqual(denied.forceFeedback.maxEffects, nil, "slots unknown when denied")
        try requireEqual(denied.id, expected.id, "the id does not depend on access")
        let text = try haptics(["probe", pad.eventNode], asNobody: true)
        // The fix for this guest: the udev rule or the group with a udev daemon, root or mdev without one.
        try require(text.contains(AccessAdvice.eventNodes()), "no fix for this system named:\n\(text)")
    }

    /// A pad whose node is missing from /dev (as in a container that shows the host's sysfs without its nodes):
    /// `haptics devices` lists it denied and says what the system said, not the udev rule, which would not help.
    static func missingNodeSaysWhy() async throws {
        let pad = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics pad without its node"))
        defer { pad.destroy() }
        if access("/run/udev/control", F_OK) == 0 { try AppUdevSuite.udevadm(["settle", "--timeout=30"]) }
        try require(unlink(pad.eventNode) == 0, "unlink \(pad.eventNode): \(String(cString: strerror(errno)))")
        let text = try haptics(["devices"])
        try require(
            text.contains("could not be opened, for another reason than permissions")
                && text.contains("\(pad.eventNode): ") && text.contains("No such file"),
            "no reason given:\n\(text)")
        try require(!text.contains("To fix:"), "a permission fix is named for a missing node:\n\(text)")
        print("    " + (text.split(separator: "\n").first { $0.contains(pad.eventNode + ": ") } ?? ""))
    }

    // MARK: the udev rule

    /// Where the rule may be in the guest: the repo's own folder when run from a checkout, or the copy of
    /// `udev/` that vm-run puts in the guest's /work.
    static let ruleCandidates = ["udev/70-haptics-gamepads.rules", "/work/udev/70-haptics-gamepads.rules"]

    /// With the real udevd: our rule, and no other, gives a pad's event node the `uaccess` tag, and never
    /// the keyboard's. systemd's own 70-uaccess.rules is masked (an empty file of the same name in
    /// /etc/udev/rules.d) because recent versions tag joysticks too and would hide a broken rule.
    static func udevRuleTagsGamepadsOnly() async throws {
        guard access("/run/udev/control", F_OK) == 0 else {
            throw TestSkip(.udevd, "no udev daemon in this guest (run the bench with --udevd)")
        }
        guard let rule = ruleCandidates.first(where: { access($0, R_OK) == 0 }) else {
            throw TestSkip(
                .udevRules, "udev/70-haptics-gamepads.rules is not in the guest's /work (vm-run copies udev/ there)")
        }
        try run(["mkdir", "-p", "/etc/udev/rules.d"])
        try run(["cp", rule, "/etc/udev/rules.d/70-haptics-gamepads.rules"])
        try run(["touch", "/etc/udev/rules.d/70-uaccess.rules"])
        defer {
            _ = try? run([
                "rm", "-f", "/etc/udev/rules.d/70-haptics-gamepads.rules", "/etc/udev/rules.d/70-uaccess.rules",
            ])
        }
        try run(["udevadm", "control", "--reload"])

        let pad = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics udev pad"))
        defer { pad.destroy() }
        try run(["udevadm", "settle", "--timeout=60"])
        let padProperties = try run(["udevadm", "info", "--query=property", "--name=\(pad.eventNode)"])
        try require(
            padProperties.contains("ID_INPUT_JOYSTICK=1"), "udev does not call the pad a joystick:\n\(padProperties)")
        try require(tags(padProperties).contains("uaccess"), "the pad's node has no uaccess tag:\n\(padProperties)")

        let everything = try decode(
            [DeviceJSON].self, from: try haptics(["devices", "--all", "--json"]), "devices --all --json")
        let keyboards = everything.filter { $0.name.lowercased().contains("keyboard") }
        try require(!keyboards.isEmpty, "no keyboard in the guest to check: \(everything.map(\.name))")
        for keyboard in keyboards {
            // Re-run the rules on the keyboard now that ours are in place.
            try run(["udevadm", "trigger", "--action=change", "--name-match=\(keyboard.node)"])
            try run(["udevadm", "settle", "--timeout=60"])
            let properties = try run(["udevadm", "info", "--query=property", "--name=\(keyboard.node)"])
            try require(!tags(properties).contains("uaccess"), "\(keyboard.name) got the uaccess tag:\n\(properties)")
        }
    }

    /// The tags in `udevadm info --query=property` output (`TAGS=:seat:uaccess:`, and `CURRENT_TAGS`).
    static func tags(_ properties: String) -> Set<String> {
        Set(
            properties.split(separator: "\n").filter { $0.hasPrefix("TAGS=") || $0.hasPrefix("CURRENT_TAGS=") }
                .flatMap { $0.drop { $0 != "=" }.dropFirst().split(separator: ":").map(String.init) })
    }

    /// Runs a command to completion; fails on a non-zero status, naming its output.
    @discardableResult
    static func run(_ arguments: [String]) throws -> String {
        let process = try Subprocess(arguments)
        let status = process.finish(timeout: hangGuardSeconds)
        try requireEqual(status, 0, "exit status of \(arguments.joined(separator: " ")) (output:\n\(process.text))")
        return process.text
    }

    // MARK: EventDevice

    static func openDevice(_ node: String) throws -> EventDevice {
        do { return try EventDevice(node: node, logger: logger()) } catch { throw TestFailure(reason: "\(error)") }
    }

    static func eventDevicePrimitives() async throws {
        let pad = try VirtualPadSuite.makePad()
        defer { pad.destroy() }
        let device = try openDevice(pad.eventNode)
        try requireEqual(device.forceFeedback.maxEffects, VirtualPadConfiguration.defaultMaxEffects, "slots")
        try require(device.forceFeedback.effects.contains(.rumble), "no rumble: \(device.forceFeedback)")
        try requireEqual(device.id.rawValue, try probe(pad.eventNode).id, "EventDevice id vs probe")
        // The handle lives in this closure only: its release must erase the slot.
        let effectID = try { () throws -> Int16 in
            let effect = try device.uploadEffect(.rumble(strong: 0.5, weak: 0.25, lengthMilliseconds: 100))
            try effect.play()
            try effect.update(.rumble(strong: 1, weak: 0, lengthMilliseconds: 200))
            try effect.stop()
            try device.setGain(0.5)
            // A gain that is not a fraction sends nothing (NaN set the gain every process shares to 0).
            for wrong in [Double.nan, 1.5, -0.5] {
                do {
                    try device.setGain(wrong)
                    throw TestFailure(reason: "setGain(\(wrong)) did not fail")
                } catch let error as EventDeviceError {
                    try requireEqual(error.kind, .invalidRequest, "setGain(\(wrong))")
                }
            }
            return effect.id
        }()
        let records = try await VirtualPadSuite.waitForRecords(pad, "the released effect's erase") { records in
            records.contains { $0.event == .erase && $0.id == effectID }
        }
        let uploads = records.filter { $0.event == .upload }
        try requireEqual(uploads.count, 2, "uploads (the update reuses the slot)")
        try requireEqual(uploads.map(\.effect?.id), [effectID, effectID], "ids the pad saw")
        try requireEqual(uploads.last?.effect?.kind, .rumble(strong: 0xffff, weak: 0), "updated effect")
        try requireEqual(records.filter { $0.event == .play }.map(\.id), [effectID], "plays")
        try requireEqual(records.filter { $0.event == .gain }.map(\.value), [0x8000], "gain")
    }

    static func eventDeviceFullThenGone() async throws {
        let pad = try VirtualPadSuite.makePad(VirtualPadConfiguration(failUploadsAfter: 2))
        let device = try openDevice(pad.eventNode)
        let effects = try (0..<2).map { _ in
            do { return try device.uploadEffect(.rumble(strong: 0.1, weak: 0.1, lengthMilliseconds: 50)) } catch {
                throw TestFailure(reason: "upload before the pad is full: \(error)")
            }
        }
        do {
            _ = try device.uploadEffect(.rumble(strong: 0.1, weak: 0.1, lengthMilliseconds: 50))
            throw TestFailure(reason: "a third upload succeeded on a pad full after 2")
        } catch let error as EventDeviceError {
            try requireEqual(error.kind, .noEffectSlot, "error of the third upload (\(error))")
        }
        pad.destroy()
        do {
            try effects[0].play()
            throw TestFailure(reason: "a play on a destroyed pad succeeded")
        } catch let error as EventDeviceError {
            try requireEqual(error.kind, .deviceGone, "error of a play after unplug (\(error))")
        }
    }
}

extension TestSkip {
    /// Skips a test of the udev source where no udev daemon runs (the bench's guest without `--udevd`).
    static func unlessUdevDaemonRuns(for source: DeviceMonitor.Source) throws(TestSkip) {
        if source == .udev && !DeviceDiscovery.udevDaemonIsRunning {
            throw TestSkip(.udevd, "no udev daemon in this guest (run the bench with --udevd)")
        }
    }
}

// The udev source of the hot-plug monitor when it is given a snapshot (as an engine's is) and the daemon's events and
// database are driven by hand: its exec queue held, synthetic uevents written to sysfs (as `udevadm trigger` does), a
// node's database entry taken away or written, and a comparison with sysfs made at a chosen moment.
import FoundationEssentials
import Glibc
import HapticTestDevices
import LinuxHapticsTesting
import LinuxInput
@_spi(Internals) import LinuxSystem
import Logging

extension DeviceSuite {
    static let udevSourceCases: [KernelTest] = [
        KernelTest(
            name: "devices/monitor-udev-source-tells-the-removal-of-a-known-pad-that-waited-in-the-bind-gate",
            body: udevMonitorTellsTheRemovalOfAKnownPadThatWaitedInTheBindGate),
        KernelTest(
            name:
                "devices/monitor-udev-source-given-a-snapshot-tells-the-add-of-a-pad-the-daemon-processed-before-the-monitor-looked",
            body: udevMonitorGivenASnapshotTellsTheAddOfAPadProcessedBeforeItLooked),
        KernelTest(
            name:
                "devices/monitor-udev-source-given-a-snapshot-a-comparison-tells-a-pad-processed-since-added-after-its-parents-bind",
            body: udevMonitorComparisonTellsAPadProcessedSinceAddedAfterItsParentsBind),
        KernelTest(
            name:
                "devices/monitor-udev-source-given-a-snapshot-a-comparison-tells-a-pad-processed-since-added-not-also-changed",
            body: udevMonitorComparisonTellsAPadProcessedSinceAddedNotAlsoChanged),
    ]

    /// A monitor given a snapshot (no node of it known to be processed by the daemon) hears the daemon's `add` of a
    /// known pad and of its HID device again, as `udevadm trigger --action=add` sends them (synthetic uevents here):
    /// the parent is binding, and the known node waits in the bind gate. The pad is unplugged before the parent's
    /// `bind` (none comes after a trigger). Until 7 December the gate forgot the node at its `remove` and nothing was
    /// told: the gone pad stayed known, and an engine bound to it never heard it go.
    static func udevMonitorTellsTheRemovalOfAKnownPadThatWaitedInTheBindGate() async throws {
        try TestSkip.unlessUdevDaemonRuns(for: .udev)
        try await EmulationSuite.withController(.xboxOneBluetooth) { pad, nodes in
            try settleUdev()
            let snapshot = try DeviceDiscovery(logger: logger()).devices(probing: .noNode)
            guard let listed = snapshot.first(where: { $0.identity.node == nodes.rumbleNode }) else {
                throw TestFailure(reason: "the snapshot does not list the pad at \(nodes.rumbleNode)")
            }
            let log = RecordingLog()
            let monitor = try DeviceMonitor(source: .udev, snapshot: snapshot, logger: log.logger)
            let events = Lock<[DeviceEvent]>([])
            guard let subscription = monitor.start({ event in events.withLock { $0.append(event) } }, ended: { _ in })
            else { throw TestFailure(reason: "the monitor did not start") }
            defer { subscription.stop() }
            let toldSoFar = { @Sendable in events.withLock { $0 } }
            try synthesizeUevent("add", of: nodes.sysfsPath)
            try synthesizeUevent("add", of: "/sys/class/input/\(listed.identity.sysName)")
            try await waitUntil("the known pad to wait for its parent's bind", toldIn: toldSoFar) {
                log.contains("node waits for its parent to bind node=\(listed.identity.sysName) ")
            }
            pad.destroy()
            try await waitUntil("the monitor to tell the pad's removal", toldIn: toldSoFar) {
                events.withLock { $0.contains { $0.kind == .removed && $0.device.node == nodes.rumbleNode } }
            }
        }
    }

    /// A monitor given a snapshot that listed a pad before the daemon processed it (its exec queue held) takes no
    /// node for processed, though the daemon's database has this one when the monitor opens (written by hand here, as
    /// the daemon writes it when it processes the pad between the source's opening and the look the monitor makes
    /// for a listing of its own): the daemon's `add`, once it comes, is told. Until 7 December the node was taken for
    /// processed and its `add` for one told already.
    static func udevMonitorGivenASnapshotTellsTheAddOfAPadProcessedBeforeItLooked() async throws {
        try await withAPadTheDaemonHasNotProcessed(named: "Haptics looked-processed pad") { pad, letGo in
            let snapshot = try DeviceDiscovery(logger: logger()).devices(probing: .noNode)
            try require(snapshot.contains { $0.identity.node == pad.eventNode }, "the snapshot does not list the pad")
            let database = try udevDatabaseFile(of: pad.eventNode)
            try writeFile(database, "I:1\n")
            let monitor = try DeviceMonitor(source: .udev, snapshot: snapshot, logger: logger())
            unlink(database)
            let events = Lock<[DeviceEvent]>([])
            guard let subscription = monitor.start({ event in events.withLock { $0.append(event) } }, ended: { _ in })
            else { throw TestFailure(reason: "the monitor did not start") }
            defer { subscription.stop() }
            let toldSoFar = { @Sendable in events.withLock { $0 } }
            try letGo()
            try await waitUntil("the monitor to tell the pad added at the daemon's add", toldIn: toldSoFar) {
                events.withLock { $0.contains { $0.kind == .added && $0.device.node == pad.eventNode } }
            }
        }
    }

    /// A monitor given a snapshot of a pad (an Xbox pad over uhid) finds, comparing with sysfs, that the daemon
    /// processed the pad since (its database entry was taken away while the monitor opened, and put back): it tells
    /// the pad added through the bind gate, as the daemon's `add` would have gone. Its HID device is binding (a
    /// synthetic `add`), so the pad is told once the device's `bind` comes, not before. Until 7 December the
    /// comparison told it at once.
    static func udevMonitorComparisonTellsAPadProcessedSinceAddedAfterItsParentsBind() async throws {
        try TestSkip.unlessUdevDaemonRuns(for: .udev)
        try await EmulationSuite.withController(.xboxOneBluetooth) { _, nodes in
            try settleUdev()
            let database = try udevDatabaseFile(of: nodes.rumbleNode)
            let entry = try readFile(database)
            unlink(database)
            var restored = false
            defer { if !restored { try? writeFile(database, entry) } }
            let snapshot = try DeviceDiscovery(logger: logger()).devices(probing: .noNode)
            try require(
                snapshot.contains { $0.identity.node == nodes.rumbleNode }, "the snapshot does not list the pad")
            let (monitor, socket) = try monitorWithItsSocket(source: .udev, snapshot: snapshot, logger: logger())
            try writeFile(database, entry)
            restored = true
            let events = Lock<[DeviceEvent]>([])
            guard let subscription = monitor.start({ event in events.withLock { $0.append(event) } }, ended: { _ in })
            else { throw TestFailure(reason: "the monitor did not start") }
            defer { subscription.stop() }
            let toldSoFar = { @Sendable in events.withLock { $0 } }
            let told = { @Sendable in toldSoFar().filter { $0.device.node == nodes.rumbleNode }.map(\.kind) }
            try synthesizeUevent("add", of: nodes.sysfsPath)
            try settleUdev()
            // The monitor's thread reads the daemon's `add` of the HID device as soon as it is sent.
            try await Task.sleep(for: .milliseconds(300))
            try await compareWithSysfs(monitorPort: socket.value.port)
            let last = try await aLastPadTold(in: toldSoFar)
            last.destroy()
            try requireEqual(told(), [], "the events told of the pad before its HID device's bind")
            try synthesizeUevent("bind", of: nodes.sysfsPath)
            try await waitUntil("the monitor to tell the pad added after the bind", toldIn: toldSoFar) {
                told().contains(.added)
            }
            try requireEqual(told(), [.added], "the events told of the pad")
        }
    }

    /// A monitor given a snapshot that listed a pad read-only, before the daemon processed it (its exec queue held),
    /// finds the pad processed since (its database entry written by hand) when it compares with sysfs: it tells the
    /// pad added, with the access it has now, and not also changed; the daemon's own `add`, read after, is one told
    /// already. Until 7 December the pad was told changed and added.
    static func udevMonitorComparisonTellsAPadProcessedSinceAddedNotAlsoChanged() async throws {
        try await withAPadTheDaemonHasNotProcessed(named: "Haptics processed-since pad") { pad, letGo in
            var snapshot = try DeviceDiscovery(logger: logger()).devices(probing: .noNode)
            guard let index = snapshot.firstIndex(where: { $0.identity.node == pad.eventNode }) else {
                throw TestFailure(reason: "the snapshot does not list the pad")
            }
            snapshot[index].access = .readOnly(reason: "listed before the daemon set its permissions")
            let (monitor, socket) = try monitorWithItsSocket(source: .udev, snapshot: snapshot, logger: logger())
            let events = Lock<[DeviceEvent]>([])
            guard let subscription = monitor.start({ event in events.withLock { $0.append(event) } }, ended: { _ in })
            else { throw TestFailure(reason: "the monitor did not start") }
            defer { subscription.stop() }
            let toldSoFar = { @Sendable in events.withLock { $0 } }
            let database = try udevDatabaseFile(of: pad.eventNode)
            try writeFile(database, "I:1\n")
            do {
                defer { unlink(database) }
                try await compareWithSysfs(monitorPort: socket.value.port)
                // The comparison reads the database on the monitor's thread after it began: the record is taken
                // away once the comparison told the pad. Taken away sooner, a comparison that read it late (a loaded
                // machine: one of two full runs here on 7 December) found the pad unprocessed and told its access
                // changed, and the daemon's `add` then told it added.
                try await waitUntil("the comparison to tell the pad processed since", toldIn: toldSoFar) {
                    toldSoFar().contains { $0.device.node == pad.eventNode }
                }
            }
            try letGo()
            try settleUdev()
            let last = try await aLastPadTold(in: toldSoFar)
            last.destroy()
            let told = toldSoFar().filter { $0.device.node == pad.eventNode }
            try requireEqual(told.map(\.kind), [.added], "the events told of the pad")
            try requireEqual(told.first?.device.access, .readWrite, "the access told with the pad's add")
        }
    }

    // MARK: the udev daemon and the monitor's comparison, driven by hand

    /// Runs `body` with a virtual pad named `name` made while the udev daemon's event queue is held (`udevadm control
    /// --stop-exec-queue`), so that the daemon has not processed it: `body` lets the queue go with `letGo`, and it is
    /// let go when `body` ends in any case, after the pad is destroyed.
    static func withAPadTheDaemonHasNotProcessed(
        named name: String, _ body: (_ pad: VirtualPad, _ letGo: () throws -> Void) async throws -> Void
    ) async throws {
        try TestSkip.unlessUdevDaemonRuns(for: .udev)
        try udevControl("--stop-exec-queue")
        var queueHeld = true
        defer { if queueHeld { try? udevControl("--start-exec-queue") } }
        let pad = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: name))
        defer { pad.destroy() }
        try await body(pad) {
            try udevControl("--start-exec-queue")
            queueHeld = false
        }
    }

    /// Runs `udevadm control` with `option` (`--stop-exec-queue`, `--start-exec-queue`).
    static func udevControl(_ option: String) throws {
        let udevadm = try Subprocess(["udevadm", "control", option])
        try requireEqual(udevadm.finish(timeout: hangGuardSeconds), 0, "udevadm control \(option) (\(udevadm.text))")
    }

    /// Has the kernel send a uevent of the device at `sysfsPath` (`add`, `bind`, `change`...), as `udevadm trigger`
    /// does: the daemon processes it and sends it on.
    static func synthesizeUevent(_ action: String, of sysfsPath: String) throws {
        try Sys.writeFile(sysfsPath + "/uevent", action)
    }

    /// The udev database entry of the event node `node` (`/run/udev/data/c13:N`): libudev calls a device the daemon
    /// has processed (initialized) when it has one.
    static func udevDatabaseFile(of node: String) throws -> String {
        let sysName = node.split(separator: "/").last.map(String.init) ?? node
        let number = try readFile("/sys/class/input/\(sysName)/dev").split(separator: "\n").first ?? ""
        return "/run/udev/data/c\(number)"
    }

    /// Has the netlink monitor whose socket has `monitorPort` compare with sysfs now, as after an overflow: its next
    /// receive fails with `ENOBUFS` (a planned fault), woken by a unicast that libudev drops (`fillSocket`'s), which
    /// leaves its queue empty. Returns once the comparison listed sysfs: what it tells comes before any event sent
    /// after.
    static func compareWithSysfs(monitorPort: UInt32) async throws {
        SyscallFaults.arm(.init(site: "udev_monitor_receive_device", errno: .noBufferSpace, calls: .nth(1)))
        defer { SyscallFaults.disarm() }
        try require(try sendUnicasts(port: monitorPort, upTo: 1) == 1, "the monitor's socket took no unicast")
        try await AppSuite.waitUntil("the monitor to compare with sysfs") {
            SyscallFaults.tally.calls["udev_enumerate_scan_devices", default: 0] > 0
        }
    }

    /// Makes the pad "Haptics last pad" and waits until `events` hold its arrival, which closes the list of events
    /// told before it: the pad, for the caller to destroy.
    static func aLastPadTold(in events: @escaping @Sendable () -> [DeviceEvent]) async throws -> VirtualPad {
        let last = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics last pad"))
        do {
            try await waitUntil("the monitor to tell the last pad's arrival", toldIn: events) {
                events().contains { $0.kind == .added && $0.device.name == "Haptics last pad" }
            }
        } catch {
            last.destroy()
            throw error
        }
        return last
    }
}

// The udev source of the hot-plug monitor when it is given a snapshot (as an engine's is) and the daemon's events are
// driven by hand: synthetic uevents written to sysfs (as `udevadm trigger` does).
import FoundationEssentials
import Glibc
import HapticTestDevices
import LinuxHapticsTesting
import LinuxInput
@_spi(Internals) import LinuxSystem
import Logging

extension DeviceSuite {
    static let udevSourceCases = [
        KernelTest(
            name: "devices/monitor-udev-source-tells-the-removal-of-a-known-pad-that-waited-in-the-bind-gate",
            body: udevMonitorTellsTheRemovalOfAKnownPadThatWaitedInTheBindGate)
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

    // MARK: the udev daemon, driven by hand

    /// Has the kernel send a uevent of the device at `sysfsPath` (`add`, `bind`, `change`...), as `udevadm trigger`
    /// does: the daemon processes it and sends it on.
    static func synthesizeUevent(_ action: String, of sysfsPath: String) throws {
        try Sys.writeFile(sysfsPath + "/uevent", action)
    }
}

// The driver's bind as the moment a hot-plugged pad may be opened: the hot-plug watch announces an emulated
// pad's node only after its parent's `bind` uevent (the driver's probe returned), and the emulators' own wait
// returns only after it too. The Xbox Wireless pad is the case that matters: 6.1's hid-microsoft marks `EV_FF`
// before it allocates the force-feedback state, and opening the node in between can oops the kernel.
import HapticTestDevices
import LinuxInput
@_spi(Internals) import LinuxSystem
import Logging

enum BindSuite {
    static let suite: KernelTestSuite = KernelTestSuite(
        name: "bind", requires: [.uhid],
        tests: [DeviceMonitor.Source.kernel, .udev].map { source in
            KernelTest(name: "bind/monitor-announces-the-xbox-pad-after-its-bind-\(plugs)-plugs/\(source.rawValue)") {
                try await monitorAnnouncesAfterBind(source: source)
            }
        }
            + [EmulatedModel.xboxOneBluetooth, .xbox360].map { model in
                KernelTest(name: "bind/emulator-wait-returns-after-the-bind/\(model.rawValue)") {
                    try await emulatorWaitsForBind(model)
                }
            })

    /// What the monitor's thread saw of the pad: its added node, and whether the parent's `bind` had been
    /// broadcast when the node was announced.
    struct Sighting: Sendable {
        var device: InputDevice
        var bindHeardFirst: Bool
    }

    static func monitorAnnouncesAfterBind(source: DeviceMonitor.Source) async throws {
        try TestSkip.unlessUdevDaemonRuns(for: source)
        let logger = EmulationSuite.logger()
        let monitor = try DeviceMonitor(source: source, logger: logger)
        // A second listener on the kernel's group: when the monitor announces the node, the parent's `bind`
        // has been broadcast to every listener, so this one has it waiting too.
        let binds = Lock(try DriverBindWatch())
        let sighting = Lock<Sighting?>(nil)
        let name = "Haptics bind-gate Xbox pad \(source.rawValue)"
        guard
            let subscription = monitor.start(
                { event in
                    guard event.kind == .added, event.device.name == name else { return }
                    let parent = hidDeviceName(of: event.device.identity.sysPath)
                    let heard = binds.withLock { watch in
                        watch.drain()
                        return watch.heardBind(of: parent)
                    }
                    sighting.withLock { $0 = $0 ?? Sighting(device: event.device, bindHeardFirst: heard) }
                }, ended: { _ in })
        else { throw TestFailure(reason: "the monitor did not start") }
        defer { subscription.stop() }
        let device: any EmulatedDevice
        do {
            device = try EmulatedModel.xboxOneBluetooth.start(name: name, logger: logger)
        } catch {
            throw TestFailure(reason: "\(error)")
        }
        defer { device.destroy() }
        for plug in 1...plugs {
            if plug > 1 {
                sighting.withLock { $0 = nil }
                do { try device.replug() } catch { throw TestFailure(reason: "plug \(plug): \(error)") }
            }
            try await AppSuite.waitUntil("plug \(plug): the monitor to announce the pad") {
                sighting.withLock { $0 != nil }
            }
            guard let seen = sighting.withLock({ $0 }) else { return }
            try require(seen.bindHeardFirst, "plug \(plug): the node was announced before its HID device's bind uevent")
            try require(
                seen.device.forceFeedback.effects.contains(.rumble),
                "plug \(plug): the announced pad has no rumble: \(seen.device.forceFeedback.effects)")
            try requireEqual(seen.device.capabilitySource, .evdev, "plug \(plug): where the pad's bits were read")
            try require((seen.device.forceFeedback.maxEffects ?? 0) > 0, "plug \(plug): the pad has no effect slots")
        }
    }

    /// Plugs per run: with the gate taken out, one run of three with a single plug (two busy processes in the
    /// guest) announced the pad without its rumble.
    static let plugs = 5

    /// The HID device (`0005:045E:0B13.0001`) above an event node's sysfs path (`.../HID/input/inputN/eventM`).
    static func hidDeviceName(of sysPath: String) -> String {
        let components = sysPath.split(separator: "/")
        return components.dropLast(3).last.map(String.init) ?? ""
    }

    static func emulatorWaitsForBind(_ model: EmulatedModel) async throws {
        // Opened before the device is created, as the emulator's own watch is.
        let binds = try DriverBindWatch()
        try await EmulationSuite.withController(model) { _, nodes in
            binds.drain()
            let bound = nodes.sysfsPath.split(separator: "/").last.map(String.init) ?? ""
            try require(binds.heardBind(of: bound), "waitUntilBound returned before \(bound)'s bind uevent")
        }
    }
}

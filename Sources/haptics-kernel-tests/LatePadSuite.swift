// Pads plugged in after the app started: an engine whose start() found none, a HapticManager that launched
// without one, and `haptics play --wait`, each picking up a virtual pad created afterwards and playing on it.
import Foundation
import HapticRendering
import HapticTestDevices
import LinuxHaptics
import AppHaptics
import LinuxInput

enum LatePadSuite {
    static let suite: KernelTestSuite = KernelTestSuite(
        name: "late-pad", requires: [.uinput],
        tests: [
            KernelTest(name: "late-pad/engine-started-without-a-pad-plays-on-it", body: engineWaits),
            KernelTest(name: "late-pad/manager-turns-haptics-on", body: managerWaits),
            KernelTest(name: "late-pad/play-wait-plays-on-it", body: playWaits),
        ])

    /// The tests need a guest with no rumble device of its own, so that "none yet" is true.
    static func requireNoRumbleDevice() throws {
        let devices = (try? DeviceDiscovery(logger: VirtualPadSuite.logger()).devices()) ?? []
        if let present = devices.first(where: { $0.forceFeedback.isRumbleCapable }) {
            throw TestSkip(.noRumbleDevice, "a rumble device is already present: \(present.name) (\(present.node))")
        }
    }

    static var monitorSource: DeviceMonitor.Source { DeviceDiscovery.udevDaemonIsRunning ? .udev : .kernel }

    static func engineWaits() async throws {
        try requireNoRumbleDevice()
        var options = HapticEngineOptions()
        options.monitorSource = monitorSource
        let engine = HapticEngine(
            output: .device(.firstRumbleDevice), options: options, logger: VirtualPadSuite.logger())
        defer { engine.stop() }
        let events = EngineSuite.Events(engine)
        do {
            try engine.start()
            throw TestFailure(reason: "start() with no rumble device should throw noDevice")
        } catch let error as HapticEngineError {
            try requireEqual(error.kind, .noDevice, "start()'s error with no rumble device")
        }
        let pad = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics late pad"))
        defer { pad.destroy() }
        try await events.wait(for: .reset, "when the pad was plugged in")
        try require(engine.isRunning, "the engine should run on the pad it found")
        let player = try engine.makeAdvancedPlayer(timeline: EngineSuite.steady(0.5, 0.5, seconds: 0.05))
        try player.start(atTime: 0)
        try await VirtualPadSuite.waitForRecords(pad, "the play on the late pad") {
            $0.contains(where: EngineSuite.isNonZeroUpload)
        }
    }

    static func managerWaits() async throws {
        try requireNoRumbleDevice()
        var options = HapticEngineOptions()
        options.monitorSource = monitorSource
        let provider = EngineOutputProvider(
            output: .device(.firstRumbleDevice), options: options, logger: VirtualPadSuite.logger())
        let resolver = HapticResourceDirectory(directory: URL(fileURLWithPath: "Haptics"))
        let manager = await MainActor.run {
            let manager = HapticManager(resolver: resolver, engineProvider: provider, logger: VirtualPadSuite.logger())
            manager.preloadPatterns()
            return manager
        }
        try require(await !MainActor.run { manager.engineAvailable }, "haptics should be off with no pad")
        let pad = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics late manager pad"))
        defer { pad.destroy() }
        try await AppSuite.waitUntil("engineAvailable true once the pad is plugged in") {
            await MainActor.run { manager.engineAvailable }
        }
        let cached = await MainActor.run {
            manager.play("thud")
            return manager.cachedPatternNames
        }
        try requireEqual(cached, ["capacitor_charge", "heartbeat", "thud"], "patterns preloaded on connection")
        try await VirtualPadSuite.waitForRecords(pad, "thud on the late pad") { EngineSuite.playsRumble($0) }
    }

    static func playWaits() async throws {
        try requireNoRumbleDevice()
        let play = try Subprocess([projectBinary("haptics"), "play", "--wait", "--json", "Haptics/thud.ahap"])
        try require(
            play.read(
                until: { $0.contains("waiting for a rumble-capable device") }, timeout: VirtualPadSuite.hangGuardSeconds
            ),
            "play --wait never said it was waiting:\n\(play.text)")
        let pad = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics late CLI pad"))
        defer { pad.destroy() }
        let status = play.finish(timeout: VirtualPadSuite.hangGuardSeconds * 4)
        try requireEqual(status, 0, "exit status of play --wait (output:\n\(play.text))")
        try require(
            pad.records().contains(where: EngineSuite.isNonZeroUpload), "thud never reached the late pad:\n\(play.text)"
        )
        try require(
            !play.text.contains("virtual output"), "play --wait must not fall back to the virtual output:\n\(play.text)"
        )
    }
}

// An Xbox Wireless Controller's trigger motors over Bluetooth, for an engine made with a trigger locality
// (`left-trigger`, `right-trigger`, `triggers`). The input subsystem has no force feedback for them (FF_RUMBLE
// has two magnitudes, and hid-microsoft enables only the body motors), so the engine writes output report 3 to
// the pad's hidraw node itself: the motor renderer's strong level on the left trigger, its weak level on the right
// (a trigger locality routes the pattern's whole level there), with only the trigger bits enabled, so the report
// says nothing about the body motors the kernel drives.
//
// Every report carries the pad's own duration, 120 ms, and no repeats, and the engine renews a playing level every
// 50 ms as it does for rumble: a process that is killed or stopped leaves the triggers running at most 120 ms
// after its last report, with nothing left behind to stop them, and a renewal may come 70 ms late before the
// motor drops out.
import HapticRendering
import LinuxInput
import LinuxSystem
import Logging
import Synchronization

final class XboxTriggerOutput: MotorOutput {
    let capabilities: OutputCapabilities
    /// Held open for the pad's identity; never written (the kernel drives its body motors for other engines).
    private let device: EventDevice
    private let hidraw: HidrawDevice
    private let last = Lock(MotorMagnitudes.off)
    private let closed = Atomic<Bool>(false)

    /// The report's duration in its 10 ms units: 120 ms, so that the motor stops within the 150 ms a killed
    /// process may leave a pad running even when the report arrives a little after it was written.
    static let durationUnits: UInt8 = 12

    init(device: EventDevice, hidraw: HidrawDevice, driver: String?) {
        self.device = device
        self.hidraw = hidraw
        var capabilities = OutputCapabilities(device: device, driver: driver)
        capabilities.hdNode = hidraw.node
        capabilities.hdKind = .triggerMotors
        self.capabilities = capabilities
    }

    /// Report 3 with the triggers at `levels` (strong on the left trigger, weak on the right), the body motors
    /// not enabled, stopping by itself after `durationUnits`.
    static func report(_ levels: MotorMagnitudes) -> XboxRumbleReport {
        func percent(_ level: Double) -> UInt8 { UInt8((min(max(level, 0), 1) * 100).rounded()) }
        return XboxRumbleReport(
            enable: XboxRumbleReport.enableLeftTrigger | XboxRumbleReport.enableRightTrigger,
            leftTrigger: percent(levels.strong), rightTrigger: percent(levels.weak), strong: 0, weak: 0,
            duration: durationUnits, startDelay: 0, loopCount: 0)
    }

    private func write(_ levels: MotorMagnitudes) throws(OutputFailure) {
        if closed.load(ordering: .relaxed) { throw OutputFailure(.closed, "the output is closed") }
        do throws(EventDeviceError) {
            try hidraw.write(Self.report(levels).bytes)
        } catch {
            throw EvdevOutput.failure(from: error)
        }
    }

    func sendNeutral() throws(OutputFailure) {
        last.withLock { $0 = .off }
        try write(.off)
    }

    func apply(_ mix: MotorMagnitudes) throws(OutputFailure) {
        last.withLock { $0 = mix }
        try write(mix)
    }

    func keepAlive() throws(OutputFailure) { try write(last.withLock { $0 }) }

    func prepare(_ pulse: PreparedPulse) throws(OutputFailure) -> Int {
        throw OutputFailure(.unsupported, "the trigger motors have no prepared pulses")
    }

    func trigger(prepared id: Int) throws(OutputFailure) {
        throw OutputFailure(.unsupported, "the trigger motors have no prepared pulses")
    }

    func pulseTrigger(prepared id: Int) -> (any PulseTrigger)? { nil }
    func stop(prepared id: Int) throws(OutputFailure) {}
    func release(prepared id: Int) {}
    func currentLevels() -> MotorMagnitudes? { nil }

    /// Stops the triggers, then closes the nodes.
    func close() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        try? hidraw.write(Self.report(.off).bytes)
        hidraw.close()
        device.close()
    }
}

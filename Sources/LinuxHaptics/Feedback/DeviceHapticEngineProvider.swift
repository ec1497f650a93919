// The engine provider HapticManager uses by default: the first rumble-capable gamepad this process may open.
import LinuxInput
public import Logging

/// Finds the first rumble-capable gamepad with read-write access and builds engines on it.
public struct DeviceHapticEngineProvider: HapticEngineProvider {
    private let logger: Logger

    public init(logger: Logger = Logger(label: "haptics.manager.engine")) {
        self.logger = logger
    }

    /// A gamepad that can rumble and that this process may write: discovery reads sysfs, so this works
    /// without a udev daemon; a listing failure counts as "no hardware".
    public func hardwareSupportsHaptics() -> Bool {
        firstCapableDevice() != nil
    }

    func firstCapableDevice() -> InputDevice? {
        do {
            return try DeviceDiscovery(logger: logger).devices().first(where: Self.isUsable)
        } catch {
            logger.info("listing input devices failed", metadata: ["error": "\(error)"])
            return nil
        }
    }

    static func isUsable(_ device: InputDevice) -> Bool {
        device.isGamepad && device.forceFeedback.isRumbleCapable && device.access.allowsForceFeedback
    }

    public func makeEngine() throws -> any ManagedHapticEngine {
        throw EngineUnavailable()
    }

    /// Placeholder until the engine lands on main (see the report): no engine can be built yet.
    struct EngineUnavailable: Error, CustomStringConvertible {
        var description: String { "the haptic engine is not part of this build yet" }
    }
}

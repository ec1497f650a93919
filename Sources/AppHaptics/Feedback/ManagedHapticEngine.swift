// The seam between HapticManager and the engine beneath it: the few things the façade asks of an engine.
// `HapticEngine` conforms in HapticEngine+Manager.swift; tests plug in an engine that records and fails on
// demand, so the manager's recovery rules are checked without a kernel.
public import AHAP

/// An engine as `HapticManager` drives it.
public protocol ManagedHapticEngine: AnyObject, Sendable {
    /// Installs the two recovery callbacks. `stopped` gets a short reason (`gameControllerDisconnect`, `idleTimeout`...).
    /// The engine may call them from any thread.
    func setRecoveryHandlers(
        stopped: @escaping @Sendable (_ reason: String) -> Void, reset: @escaping @Sendable () -> Void)
    /// Starts (or restarts) output; throws when the device cannot be opened or driven.
    func start() throws
    /// Stops output and releases the device.
    func stop()
    /// Gets ready for an imminent haptic: opens the device.
    func prepare() throws
    /// Gets ready to play `pattern`: uploads it ahead where it is a single pulse, so that every `play` of it is
    /// one `write()` while it stays prepared.
    func prepare(_ pattern: HapticPattern) throws
    /// Plays `pattern` now, fire-and-forget, alongside anything already playing (through the player
    /// `prepare(_:)` readied for it, when there is one).
    func play(_ pattern: HapticPattern) throws
    /// Plays one transient now, cancelling the tap still playing, so rapid calls replace each other instead of
    /// piling up. Values are already clamped to 0...1.
    func playTransient(intensity: Double, sharpness: Double) throws
}

/// Finds the hardware and builds engines for `HapticManager`.
public protocol HapticEngineProvider: Sendable {
    /// The capability check, done before any engine is created: whether a rumble-capable device that this
    /// process may open exists now (Core Haptics' `capabilitiesForHardware().supportsHaptics`).
    func hardwareSupportsHaptics() -> Bool
    /// Why `hardwareSupportsHaptics()` finds nothing now, for the manager's log: a device there that this process
    /// may not write (naming it, and the fix), a force device left out, or none at all; nil when the provider
    /// cannot tell.
    func hardwareUnavailableReason() -> String?
    /// A new, not yet started engine on that hardware.
    func makeEngine() throws -> any ManagedHapticEngine
    /// Calls `connected` whenever capable hardware may have been plugged in (GameController's connect
    /// notification), until the returned task is cancelled; nil when this provider cannot watch.
    func watchForHardware(_ connected: @escaping @Sendable () -> Void) -> Task<Void, Never>?
}

extension HapticEngineProvider {
    /// Providers that cannot tell why there is no hardware.
    public func hardwareUnavailableReason() -> String? { nil }

    /// Providers that cannot watch for hardware: without a device at launch, haptics stay off.
    public func watchForHardware(_ connected: @escaping @Sendable () -> Void) -> Task<Void, Never>? { nil }
}

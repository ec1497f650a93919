// An open evdev node and the force-feedback client primitives the engine builds on: upload, erase,
// play, stop, gain. Effects belong to the open descriptor: closing it (or releasing the last reference)
// makes the kernel stop and erase every effect this process uploaded.
internal import CLinuxInput
internal import Glibc
public import Logging
import Synchronization
@_spi(Internals) public import LinuxSystem

/// Why a device operation failed, sorted into what a caller does about it.
public struct EventDeviceError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Equatable, Sendable {
        /// The device was unplugged (`ENODEV`): drop it and wait for it to come back.
        case deviceGone
        /// Every effect slot is taken (`ENOSPC`): erase an effect or reuse an id.
        case noEffectSlot
        /// The node may not be opened or written (`EACCES`/`EPERM`).
        case permissionDenied
        /// The device has no force feedback at all (`ENOSYS`).
        case noForceFeedback
        /// The kernel rejected the request (`EINVAL`): an effect type the device lacks, or an unknown id.
        case invalidRequest
        /// The node does not exist (`ENOENT`).
        case notFound
        /// This `EventDevice` was closed.
        case closed
        /// Anything else; `underlying` has the errno.
        case other
    }

    public let kind: Kind
    /// What was attempted: `upload effect`, `play effect 3`...
    public let operation: String
    public let node: String
    public let underlying: SystemCallError?

    public init(kind: Kind, operation: String, node: String, underlying: SystemCallError?) {
        self.kind = kind
        self.operation = operation
        self.node = node
        self.underlying = underlying
    }

    init(_ error: SystemCallError, operation: String, node: String) {
        self.init(kind: Self.kind(for: error.errno), operation: operation, node: node, underlying: error)
    }

    /// The capabilities of `node` could not be read: a file that answers no evdev request is no event node.
    /// Character devices of other kinds refuse `EVIOCGBIT` with `EINVAL` (a hidraw node, a joystick's `jsN`) or
    /// `ENOTTY` (most others): either way the file named is the problem, not a request of ours, so neither is
    /// `invalidRequest`.
    init(capabilityRead error: SystemCallError, node: String) {
        let notANode = error.errno == .invalidArgument || error.errno == .inappropriateIOControl
        self.init(
            kind: notANode ? .other : Self.kind(for: error.errno), operation: "read capabilities", node: node,
            underlying: error)
    }

    /// Sorts an errno from an evdev call into a `Kind`.
    static func kind(for errno: Errno) -> Kind {
        switch errno {
        case .noDevice, .noSuchAddressOrDevice: .deviceGone
        case .noSpace: .noEffectSlot
        case .permissionDenied, .notPermitted: .permissionDenied
        case .notImplemented: .noForceFeedback
        case .invalidArgument: .invalidRequest
        case .noSuchFileOrDirectory: .notFound
        case .badFileDescriptor: .closed
        default: .other
        }
    }

    public var description: String {
        let reason: String
        switch kind {
        case .deviceGone: reason = "the device is gone (unplugged)"
        case .noEffectSlot: reason = "no free effect slot on the device"
        case .permissionDenied: reason = "permission denied"
        case .noForceFeedback: reason = "the device has no force feedback"
        case .invalidRequest:
            reason = "the request is invalid (an effect type the device lacks, an unknown id, a value out of range)"
        case .notFound: reason = "no such device node"
        case .closed: reason = "the device was closed"
        case .other:
            // A file that answers no evdev request, or a folder, where an event node was named (`EINVAL` sorts
            // here only from a capability read: `init(capabilityRead:node:)`).
            let notANode: Set<Errno> = [.inappropriateIOControl, .isDirectory, .invalidArgument]
            reason =
                underlying.map { notANode.contains($0.errno) } == true
                ? "not an input event node (/dev/input/eventN)" : "system error"
        }
        return "\(operation) on \(node) failed: \(reason)" + (underlying.map { " [\($0)]" } ?? "")
    }
}

/// An open event node (`/dev/input/eventN`) with its identity, capabilities and force-feedback
/// primitives. Opening never grabs the device and nothing here reads its input events.
///
/// Thread-safe: calls may come from any thread, and none waits for another's: each holds the descriptor in use
/// for its system call (`SharedDescriptor`), so `close()` cannot pull it away mid-call.
public final class EventDevice: Sendable {
    public let identity: InputDeviceIdentity
    public let capabilities: InputDeviceCapabilities
    private let descriptor: SharedDescriptor
    private let logger: Logger

    /// The stable id (`StableDeviceID`) of the device.
    public var id: StableDeviceID { identity.stableID }
    /// The event node, a link opened resolved (`/dev/input/eventN`).
    public var node: String { identity.node }
    public var forceFeedback: ForceFeedbackCapabilities { capabilities.forceFeedback }

    /// Opens `node` read-write (force feedback needs write) without grabbing it, and reads its identity,
    /// capabilities and effect slots.
    public init(node: String, logger: Logger) throws(EventDeviceError) {
        let fd: Int32
        do throws(SystemCallError) {
            fd = try Sys.open(node, flags: O_RDWR | O_NONBLOCK)
        } catch {
            throw EventDeviceError(error, operation: "open", node: node)
        }
        let snapshot: EvdevSnapshot
        var slots: Int32 = 0
        do throws(SystemCallError) {
            snapshot = try EvdevSnapshot(fileDescriptor: fd)
            if !snapshot.bits.forceFeedback.isEmpty {
                _ = try Sys.ioctl(fd, cli_EVIOCGEFFECTS(), "EVIOCGEFFECTS", &slots)
            }
        } catch {
            Sys.close(fd)
            throw EventDeviceError(capabilityRead: error, node: node)
        }
        // A link (`/dev/input/by-id/...-event-joystick`) is known by the node it names, as listings and hot-plug
        // events know it, and its sysfs directory by that node's name: the hidraw node, sound card and driver
        // are found from there.
        let resolved = DeviceDiscovery.resolvedNode(node)
        let sysName = String(resolved.split(separator: "/").last ?? "")
        identity = InputDeviceIdentity(
            name: snapshot.name, bus: snapshot.bus, vendor: snapshot.vendor, product: snapshot.product,
            version: snapshot.version, uniq: snapshot.uniq, phys: snapshot.phys, sysName: sysName, node: resolved,
            sysPath: "/sys/class/input/\(sysName)")
        capabilities = InputDeviceCapabilities(bits: snapshot.bits, maxEffects: Int(slots))
        descriptor = SharedDescriptor(fd)
        self.logger = logger
        logger.debug("opened event device", metadata: ["node": "\(node)", "id": "\(identity.stableID)"])
    }

    deinit {
        close()
    }

    /// Closes the node; the kernel stops and erases every effect uploaded through it. Later calls fail
    /// with `.closed`. Closing twice is harmless.
    public func close() {
        guard descriptor.close() else { return }
        logger.debug("closed event device", metadata: ["node": "\(node)"])
    }

    public var isClosed: Bool { descriptor.isClosed }

    /// Uploads `effect` (`EVIOCSFF`) and returns the kernel's id for it. With `effect.id == -1` the
    /// kernel picks a free slot; with an id from an earlier upload it updates that effect in place
    /// (a playing effect changes without restarting).
    public func upload(_ effect: ForceFeedbackEffect) throws(EventDeviceError) -> Int16 {
        var raw = effect.raw
        try withDescriptor("upload effect") { (fd) throws(SystemCallError) in
            _ = try Sys.ioctl(fd, cli_EVIOCSFF(), "EVIOCSFF", &raw)
        }
        return raw.id
    }

    /// Uploads `effect` into a new slot and returns a handle that erases the slot when released.
    public func uploadEffect(_ effect: ForceFeedbackEffect) throws(EventDeviceError) -> UploadedEffect {
        var fresh = effect
        fresh.id = -1
        let id = try upload(fresh)
        return UploadedEffect(device: self, id: id, logger: logger)
    }

    /// Erases the effect `id` (`EVIOCRMFF`); the kernel stops it first if it is playing.
    public func erase(effectID id: Int16) throws(EventDeviceError) {
        try withDescriptor("erase effect \(id)") { (fd) throws(SystemCallError) in
            _ = try Sys.ioctl(fd, cli_EVIOCRMFF(), "EVIOCRMFF", value: Int32(id))
        }
    }

    /// Starts effect `id`, `count` times in a row (an `EV_FF` event with value = count).
    public func play(effectID id: Int16, count: Int32 = 1) throws(EventDeviceError) {
        try send(code: UInt16(bitPattern: id), value: count, operation: "play effect \(id)")
    }

    /// The play event of effect `id`, built ahead (`EffectTrigger`).
    public func trigger(effectID id: Int16) -> EffectTrigger {
        EffectTrigger(descriptor: descriptor, effectID: id, node: node)
    }

    /// Stops effect `id` (an `EV_FF` event with value 0).
    public func stop(effectID id: Int16) throws(EventDeviceError) {
        try send(code: UInt16(bitPattern: id), value: 0, operation: "stop effect \(id)")
    }

    /// Sets the device's overall strength, 0...1 (`FF_GAIN`, 0...0xffff); needs the `gain` capability. The gain
    /// is the device's, shared by every process using it: a fraction outside 0...1, or not a number, fails with
    /// `.invalidRequest` and sends nothing.
    public func setGain(_ fraction: Double) throws(EventDeviceError) {
        try send(feature: .gain, fraction: fraction, operation: "set gain")
    }

    /// Sets the autocenter strength, 0...1 (`FF_AUTOCENTER`, 0...0xffff); needs `autocenter`. A fraction outside
    /// 0...1, or not a number, fails with `.invalidRequest` and sends nothing.
    public func setAutocenter(_ fraction: Double) throws(EventDeviceError) {
        try send(feature: .autocenter, fraction: fraction, operation: "set autocenter")
    }

    private func send(feature: ForceFeedbackFeature, fraction: Double, operation: String) throws(EventDeviceError) {
        guard (0...1).contains(fraction) else {
            throw EventDeviceError(
                kind: .invalidRequest, operation: "\(operation) to \(fraction) (not within 0...1)", node: node,
                underlying: nil)
        }
        try send(code: feature.rawValue, value: Int32(ForceFeedbackEffect.magnitude(fraction)), operation: operation)
    }

    /// Writes one `EV_FF` input event: a single `write()`, the cheapest way to trigger a prepared effect.
    /// `operation` names the call in an error; it is only built when the write fails.
    private func send(code: UInt16, value: Int32, operation: @autoclosure () -> String) throws(EventDeviceError) {
        try withDescriptor(operation()) { (fd) throws(SystemCallError) in
            try Self.writeForceFeedbackEvent(fd, code: code, value: value)
        }
    }

    /// The `write` system call (made in place: `Sys.writeDirect`) of one `EV_FF` input event (`code`, `value`) on
    /// `fd`.
    fileprivate static func writeForceFeedbackEvent(_ fd: Int32, code: UInt16, value: Int32) throws(SystemCallError) {
        var event = input_event()
        event.type = UInt16(EV_FF)
        event.code = code
        event.value = value
        _ = try withUnsafeBytes(of: &event) { (bytes) throws(SystemCallError) -> Int in
            try Sys.writeDirect(fd, bytes)
        }
    }

    /// What a call on a closed descriptor fails with.
    fileprivate static let closedFailure = SystemCallError(.badFileDescriptor, call: "closed")

    private func withDescriptor(
        _ operation: @autoclosure () -> String, _ body: (Int32) throws(SystemCallError) -> Void
    ) throws(EventDeviceError) {
        let failure: SystemCallError?
        do throws(SystemCallError) {
            failure =
                try descriptor.withDescriptor(body) == nil ? Self.closedFailure : nil
        } catch {
            failure = error
        }
        guard let failure else { return }
        if failure.isDeviceGone {
            logger.info("event device gone", metadata: ["node": "\(node)"])
        }
        throw EventDeviceError(failure, operation: operation(), node: node)
    }
}

/// An effect uploaded to a device; its slot is erased when this handle is released (or `erase()`d).
/// Keeps its device open while it lives.
public final class UploadedEffect: Sendable {
    public let device: EventDevice
    /// The kernel's id of the effect's slot.
    public let id: Int16
    private let erased = Atomic<Bool>(false)
    private let logger: Logger

    init(device: EventDevice, id: Int16, logger: Logger) {
        self.device = device
        self.id = id
        self.logger = logger
    }

    deinit {
        guard !erased.load(ordering: .acquiring), !device.isClosed else { return }
        do throws(EventDeviceError) {
            try device.erase(effectID: id)
        } catch {
            // A gone device has already dropped the slot; anything else is worth a note, not a failure.
            if error.kind != .deviceGone {
                logger.info("erasing a released effect failed", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Replaces the effect's parameters in place (same slot, same id).
    public func update(_ effect: ForceFeedbackEffect) throws(EventDeviceError) {
        var updated = effect
        updated.id = id
        _ = try device.upload(updated)
    }

    public func play(count: Int32 = 1) throws(EventDeviceError) { try device.play(effectID: id, count: count) }

    /// Its play event, built ahead: a trigger outlives neither the slot nor the device's descriptor usefully
    /// (keep this handle while firing it).
    public func trigger() -> EffectTrigger { device.trigger(effectID: id) }

    public func stop() throws(EventDeviceError) { try device.stop(effectID: id) }

    /// Erases the slot now rather than on release.
    public func erase() throws(EventDeviceError) {
        guard !erased.exchange(true, ordering: .acquiringAndReleasing) else { return }
        try device.erase(effectID: id)
    }
}

/// One effect's play event, built ahead for one open device: firing it is a single `write()` of that event on the
/// device's descriptor and nothing else, the cheapest start there is. Once the device is closed it fails with
/// `.closed` and writes nothing. A value, held in place by what fires it: firing reads no object but the device's
/// descriptor.
public struct EffectTrigger: Sendable {
    private let descriptor: SharedDescriptor
    public let effectID: Int16
    private let node: String

    init(descriptor: SharedDescriptor, effectID: Int16, node: String) {
        self.descriptor = descriptor
        self.effectID = effectID
        self.node = node
    }

    public func fire() throws(EventDeviceError) {
        let failure: SystemCallError?
        do throws(SystemCallError) {
            let written: Void? = try descriptor.withDescriptor { (fd) throws(SystemCallError) in
                try EventDevice.writeForceFeedbackEvent(fd, code: UInt16(bitPattern: effectID), value: 1)
            }
            failure = written == nil ? EventDevice.closedFailure : nil
        } catch {
            failure = error
        }
        if let failure { throw EventDeviceError(failure, operation: "play effect \(effectID)", node: node) }
    }
}

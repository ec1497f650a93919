// A minimal force-feedback client written straight against the kernel ABI (Glibc + the ioctl shim), so the
// kernel tests exercise the virtual pad with nothing of ours in between.
import CLinuxInput
import CLinuxSystem
import Foundation
import HapticTestDevices
import LinuxInput
import Glibc
@_spi(Internals) import LinuxSystem

/// An errno from the client's side of the node.
struct ClientError: Error, Equatable, CustomStringConvertible {
    let errno: Errno
    let call: String

    init(code: Int32, call: String) {
        errno = Errno(rawValue: code)
        self.call = call
    }

    var description: String { "\(call): \(errno)" }
}

final class RawClient {
    private(set) var fd: Int32
    /// Whether to note when each request (upload, erase, `EV_FF` event) is made: a test that sends the same
    /// requests to two devices can then time each device's effects from its own requests.
    var timesRequests = false
    /// When each request was made (just before its system call), while `timesRequests` is set.
    private(set) var requestTimes: [PadTimestamp] = []

    init(node: String) throws(ClientError) {
        fd = open(node, O_RDWR | O_CLOEXEC)
        if fd < 0 { throw ClientError(code: errno, call: "open(\(node))") }
    }

    deinit { close() }

    func close() {
        if fd >= 0 { _ = Glibc.close(fd) }
        fd = -1
    }

    /// `EVIOCSFF`; returns the slot the kernel chose.
    @discardableResult
    func upload(_ effect: ff_effect) throws(ClientError) -> Int16 {
        var effect = effect
        noteRequest()
        if cls_ioctl_ptr(fd, cli_EVIOCSFF(), &effect) < 0 { throw ClientError(code: errno, call: "ioctl(EVIOCSFF)") }
        return effect.id
    }

    @discardableResult
    func uploadRumble(strong: UInt16, weak: UInt16, length: UInt16 = 0, delay: UInt16 = 0, id: Int16 = -1)
        throws(ClientError) -> Int16
    {
        try upload(Self.rumble(strong: strong, weak: weak, length: length, delay: delay, id: id))
    }

    static func rumble(strong: UInt16, weak: UInt16, length: UInt16 = 0, delay: UInt16 = 0, id: Int16 = -1) -> ff_effect
    {
        var effect = ff_effect()
        effect.type = UInt16(FF_RUMBLE)
        effect.id = id
        effect.replay = ff_replay(length: length, delay: delay)
        cli_ff_rumble(&effect).pointee = ff_rumble_effect(strong_magnitude: strong, weak_magnitude: weak)
        return effect
    }

    /// `EVIOCRMFF`.
    func erase(_ id: Int16) throws(ClientError) {
        noteRequest()
        if cls_ioctl_int(fd, cli_EVIOCRMFF(), Int32(id)) < 0 {
            throw ClientError(code: errno, call: "ioctl(EVIOCRMFF)")
        }
    }

    func play(_ id: Int16, count: Int32 = 1) throws(ClientError) {
        try send(code: UInt16(bitPattern: id), value: count)
    }
    func stop(_ id: Int16) throws(ClientError) { try send(code: UInt16(bitPattern: id), value: 0) }
    func setGain(_ gain: UInt16) throws(ClientError) { try send(code: UInt16(FF_GAIN), value: Int32(gain)) }

    private func noteRequest() {
        if timesRequests { requestTimes.append(ProcessSuite.now()) }
    }

    /// One `EV_FF` event, written the way every client does.
    func send(code: UInt16, value: Int32) throws(ClientError) {
        var event = input_event()
        event.type = UInt16(EV_FF)
        event.code = code
        event.value = value
        let size = MemoryLayout<input_event>.size
        noteRequest()
        let written = withUnsafeBytes(of: &event) { Glibc.write(fd, $0.baseAddress, size) }
        if written != size { throw ClientError(code: written < 0 ? errno : EIO, call: "write(EV_FF)") }
    }
}

/// The open descriptors of this process and what each points at (`readlink` of /proc/self/fd/N), without the
/// one the listing itself uses. The one reader of /proc/self/fd for every leak check.
func openDescriptors() -> [Int32: String] {
    guard let directory = opendir("/proc/self/fd") else { return [:] }
    defer { closedir(directory) }
    let own = dirfd(directory)
    var descriptors: [Int32: String] = [:]
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
            String(decoding: bytes.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        guard let fd = Int32(name), fd != own else { continue }
        var target = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/fd/\(name)", &target, target.count - 1)
        descriptors[fd] =
            length < 0 ? "?" : String(decoding: target.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
    return descriptors
}

/// The descriptors open now that were not open (to the same file) in `before`: the leaks, if a scenario that
/// started at `before` has ended. A descriptor of `before` that closed meanwhile is not a leak, and a count
/// would let it hide a real one.
/// A timerfd among them also says whose it can be (`TimerDescriptor`).
func descriptorsOpened(since before: [Int32: String]) -> [String] {
    openDescriptors().filter { before[$0.key] != $0.value }.sorted { $0.key < $1.key }.map { fd, target in
        guard target == TimerDescriptor.target, let timer = TimerDescriptor(fd) else { return "\(fd)->\(target)" }
        return "\(fd)->\(target) (\(timer))"
    }
}

/// What /proc/self/fdinfo says of a timerfd: its clock and whether it blocks. The engine's playback timer is a
/// blocking `CLOCK_MONOTONIC` one; Dispatch's (the Swift runtime's sleeps) do not block.
struct TimerDescriptor: CustomStringConvertible {
    static let target = "anon_inode:[timerfd]"
    let clock: Int
    let blocks: Bool

    init?(_ fd: Int32) {
        guard let info = try? String(contentsOfFile: "/proc/self/fdinfo/\(fd)", encoding: .utf8) else { return nil }
        var fields: [String: String] = [:]
        for line in info.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = parts[1].trimmingCharacters(in: .whitespaces) }
        }
        guard let clock = fields["clockid"].flatMap({ Int($0) }),
            let flags = fields["flags"].flatMap({ Int($0, radix: 8) })
        else { return nil }
        self.clock = clock
        blocks = flags & Int(O_NONBLOCK) == 0
    }

    var description: String { "clock \(clock), \(blocks ? "blocking" : "non-blocking")" }
}

/// The Swift runtime's timers: Dispatch opens one non-blocking timerfd per clock its sleeps use, the first
/// time a sleep on that clock is still ahead when armed, and keeps it for the process.
enum RuntimeTimers {
    /// `CLOCK_MONOTONIC` and `CLOCK_BOOTTIME`, the clocks under `SuspendingClock` and `ContinuousClock`.
    static let clocks: Set<Int> = [Int(CLOCK_MONOTONIC), Int(CLOCK_BOOTTIME)]

    /// The clocks of the runtime's timerfds open now.
    static func open() -> Set<Int> {
        Set(
            openDescriptors().compactMap { fd, target -> Int? in
                guard target == TimerDescriptor.target, let timer = TimerDescriptor(fd), !timer.blocks else {
                    return nil
                }
                return timer.clock
            })
    }
}

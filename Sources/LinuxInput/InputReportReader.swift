// When a pad's input reports arrive, read from an event node of the pad that passes every report on: a Switch
// controller's motion node (hid-nintendo's "(IMU)" input device, three samples and three SYN_REPORTs per report).
// hid-nintendo sends its rumble frames on those reports, so their times say when a frame can go out
// (`FramePacing`). Reading never blocks and never grabs the node: the reader takes what is queued when asked,
// and the kernel keeps the newest events when the queue overflows in between, which is all it needs.
internal import CLinuxInput
internal import Glibc
package import Logging
@_spi(Internals) import LinuxSystem

/// The arrival times of a pad's input reports, from an event node that has an event for each.
package final class InputReportReader: Sendable {
    package let node: String
    private let descriptor: SharedDescriptor
    private let logger: Logger

    /// Opens `node` read-only without blocking and has its events stamped on `CLOCK_MONOTONIC` (the engine's clock).
    package init(node: String, logger: Logger) throws(EventDeviceError) {
        let fd: Int32
        do throws(SystemCallError) {
            fd = try Sys.open(node, flags: O_RDONLY | O_NONBLOCK)
        } catch {
            throw EventDeviceError(error, operation: "open", node: node)
        }
        do throws(SystemCallError) {
            var clock = CLOCK_MONOTONIC
            _ = try Sys.ioctl(fd, cli_EVIOCSCLOCKID(), "EVIOCSCLOCKID", &clock)
        } catch {
            Sys.close(fd)
            throw EventDeviceError(error, operation: "set the event clock", node: node)
        }
        self.node = node
        descriptor = SharedDescriptor(fd)
        self.logger = logger
    }

    deinit { close() }

    package func close() { _ = descriptor.close() }

    /// The times (seconds on `CLOCK_MONOTONIC`) of the `SYN_REPORT`s queued since the last call, in order; empty
    /// when none is, or the node is gone or closed.
    package func reportTimes() -> [Double] {
        var times: [Double] = []
        var events = [input_event](repeating: input_event(), count: Self.batch)
        while true {
            let read = events.withUnsafeMutableBytes { buffer in
                Result { () throws(SystemCallError) -> Int? in
                    try descriptor.withDescriptor { (fd) throws(SystemCallError) in
                        try Sys.readReports(fd, into: buffer)
                    }
                }
            }
            let count: Int
            switch read {
            case .success(let bytes):
                guard let bytes else { return times }
                count = bytes / MemoryLayout<input_event>.stride
            case .failure(let error):
                if error.errno != .wouldBlock {
                    logger.debug("reading input reports failed", metadata: ["node": "\(node)", "error": "\(error)"])
                }
                return times
            }
            for event in events.prefix(count) where event.type == UInt16(EV_SYN) && event.code == UInt16(SYN_REPORT) {
                times.append(Double(event.time.tv_sec) + Double(event.time.tv_usec) / 1e6)
            }
            if count < events.count { return times }
        }
    }

    /// Events read per system call.
    private static let batch = 64

    /// The motion node of the pad whose event node is at `sysPath` (`/sys/class/input/eventN`): the event node of
    /// another input device of the same HID device that is an accelerometer (`INPUT_PROP_ACCELEROMETER`). Nil
    /// when there is none (a pad without one, a device that is not HID).
    package static func motionNode(besideEvent sysPath: String) -> String? {
        guard let hid = HidrawDevice.hidDevice(ofEvent: sysPath),
            let inputs = try? Sys.directoryEntries(hid + "/input")
        else { return nil }
        for input in inputs.sorted() where input.hasPrefix("input") {
            let folder = hid + "/input/" + input
            guard let properties = try? Sys.readSmallFile(folder + "/properties"),
                let bits = UInt64(properties.filter(\.isHexDigit), radix: 16),
                bits & (1 << UInt64(INPUT_PROP_ACCELEROMETER)) != 0,
                let event = (try? Sys.directoryEntries(folder))?.sorted().first(where: { $0.hasPrefix("event") })
            else { continue }
            return "/dev/input/" + event
        }
        return nil
    }
}

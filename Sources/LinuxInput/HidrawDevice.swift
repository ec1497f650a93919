// A HID device's raw node (/dev/hidrawN), opened for writing output reports beside the kernel driver that stays
// bound to it: the driver keeps its input and force-feedback nodes, and what we write reaches the device as an
// output report of our making. The kernel does not stop anything we started when the node is closed or we die:
// a device we stream to must stop by itself when the reports stop (see the DualSense haptics stream), or be told
// to by a silence guard (HidrawSilenceGuard) that outlives us.
internal import Glibc
package import Logging
@_spi(Internals) import LinuxSystem

/// An open hidraw node, written by one thread at a time and closed by any.
package final class HidrawDevice: Sendable {
    package let node: String
    private let descriptor: SharedDescriptor
    private let logger: Logger

    /// Opens `node` for writing. Fails with `.permissionDenied` when the user may not (the udev rule grants
    /// it for the supported controllers), `.notFound` or `.deviceGone` when it is not there.
    package init(node: String, logger: Logger) throws(EventDeviceError) {
        do throws(SystemCallError) {
            descriptor = SharedDescriptor(try Sys.open(node, flags: O_WRONLY))
        } catch {
            throw EventDeviceError(error, operation: "open", node: node)
        }
        self.node = node
        self.logger = logger
        logger.debug("opened hidraw node", metadata: ["node": "\(node)"])
    }

    deinit { close() }

    /// Writes one output report (its id first). `.deviceGone` once the device is unplugged.
    package func write(_ report: [UInt8]) throws(EventDeviceError) {
        let failure: SystemCallError?
        do throws(SystemCallError) {
            let written = try descriptor.withDescriptor { (fd) throws(SystemCallError) -> Int in
                try report.withUnsafeBytes { bytes in
                    Result { () throws(SystemCallError) -> Int in try Sys.write(fd, bytes) }
                }.get()
            }
            failure = written == nil ? SystemCallError(.badFileDescriptor, call: "closed") : nil
        } catch {
            failure = error
        }
        guard let failure else { return }
        throw EventDeviceError(failure, operation: "write report \(report.first ?? 0)", node: node)
    }

    /// Runs `body` with the node's descriptor held open; nil, without running it, once closed. For the silence
    /// guard, whose fork gives a child its own copy of the descriptor.
    func withDescriptor<T, E: Error>(_ body: (Int32) throws(E) -> T) throws(E) -> T? {
        try descriptor.withDescriptor(body)
    }

    package func close() {
        guard descriptor.close() else { return }
        logger.debug("closed hidraw node", metadata: ["node": "\(node)"])
    }

    /// The sysfs folder of the HID device an input event node belongs to (its `inputN` parent's parent), resolved;
    /// nil when the event node has none (uinput).
    package static func hidDevice(ofEvent sysPath: String) -> String? {
        try? Sys.realPath(sysPath + "/device/device")
    }

    /// The hidraw node of the HID device an input event node belongs to: `sysPath` is the event node's
    /// (`/sys/class/input/eventN` or its resolved path); its parent input device's parent is the HID device,
    /// whose `hidraw/` folder names the node. Nil for an input device that is not HID (uinput, xpad) or a HID
    /// device without hidraw.
    package static func node(besideEvent sysPath: String) -> String? {
        guard let hid = hidDevice(ofEvent: sysPath), let names = try? Sys.directoryEntries(hid + "/hidraw"),
            let name = names.filter({ $0.hasPrefix("hidraw") }).sorted().first
        else { return nil }
        return "/dev/" + name
    }

    /// The hidraw node beside the event node at `eventNode` (`/dev/input/eventN`), found through its sysfs path.
    package static func node(besideEventNode eventNode: String) -> String? {
        node(besideEvent: "/sys/class/input/" + (eventNode.split(separator: "/").last.map(String.init) ?? eventNode))
    }
}

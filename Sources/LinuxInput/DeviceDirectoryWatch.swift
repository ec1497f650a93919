// The inotify source of the device monitor: watches /dev/input for event nodes appearing, disappearing
// and changing permissions, the way SDL does where udev is not usable. /dev/input itself may not exist
// yet (a machine with no input device) and devtmpfs removes it when its last node goes, so /dev is
// watched too, for the directory's return.
internal import Glibc
import Logging
@_spi(Internals) import LinuxSystem

/// One record of the inotify stream (`struct inotify_event`). Package access: the fuzz target feeds `parse` raw
/// bytes, as the kernel would.
package struct InotifyRecord: Equatable, Sendable {
    package var watch: Int32
    package var mask: UInt32
    package var name: String

    package init(watch: Int32, mask: UInt32, name: String) {
        self.watch = watch
        self.mask = mask
        self.name = name
    }

    /// Splits what `read(2)` returned from an inotify descriptor into records: each is a fixed header
    /// (`wd`, `mask`, `cookie`, `len`) followed by `len` bytes of NUL-padded name.
    package static func parse(_ bytes: UnsafeRawBufferPointer) -> [InotifyRecord] {
        let headerSize = MemoryLayout<inotify_event>.size
        var records: [InotifyRecord] = []
        var offset = 0
        while offset + headerSize <= bytes.count {
            let header = bytes.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
            let length = Int(header.len)
            let nameStart = offset + headerSize
            guard nameStart + length <= bytes.count else { break }
            let nameBytes = bytes[nameStart..<(nameStart + length)].prefix { $0 != 0 }
            records.append(
                InotifyRecord(watch: header.wd, mask: header.mask, name: String(decoding: nameBytes, as: UTF8.self)))
            offset = nameStart + length
        }
        return records
    }
}

/// What the inotify stream means for the set of event nodes.
enum DirectoryChange: Equatable {
    case node(DeviceEvent.Kind, sysName: String)
    /// Events may have been missed (the directory came back, or the queue overflowed): compare the
    /// known nodes with what exists now.
    case rescan
}

final class DeviceDirectoryWatch {
    static let deviceDirectory = "/dev"
    static let inputDirectory = "/dev/input"
    /// Room for many records per read; one record is at most a header plus NAME_MAX + 1 bytes.
    private static let readBufferSize = 4096

    /// Node created, deleted, renamed in or out, or its permissions/ACL changed (udev's uaccess rule
    /// applies an ACL after the node exists, which shows up as an attribute change).
    static let inputMask = UInt32(IN_CREATE | IN_DELETE | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO)
    /// Permission, owner or ACL changes alone: what the kernel's uevents never tell (the netlink source's
    /// complement, where a helper such as mdev sets a node's permissions after the kernel announced it).
    static let attributeMask = UInt32(IN_ATTRIB)
    /// `/dev/input` (re)appearing.
    static let deviceMask = UInt32(IN_CREATE | IN_MOVED_TO | IN_ONLYDIR)

    let fileDescriptor: Int32
    private let deviceWatch: Int32
    private var inputWatch: Int32?
    private let inputWatchMask: UInt32
    private let logger: Logger

    /// Watches `/dev/input` for `mask` (`inputMask`: every change; `attributeMask`: attribute changes alone),
    /// and `/dev` for `/dev/input`'s return.
    init(mask: UInt32 = inputMask, logger: Logger) throws(SystemCallError) {
        self.logger = logger
        inputWatchMask = mask
        fileDescriptor = try Sys.inotifyInit()
        do throws(SystemCallError) {
            deviceWatch = try Sys.inotifyAddWatch(fileDescriptor, Self.deviceDirectory, mask: Self.deviceMask)
        } catch {
            Sys.close(fileDescriptor)
            throw error
        }
        watchInputDirectory()
    }

    deinit { Sys.close(fileDescriptor) }

    private func watchInputDirectory() {
        do throws(SystemCallError) {
            inputWatch = try Sys.inotifyAddWatch(fileDescriptor, Self.inputDirectory, mask: inputWatchMask)
        } catch {
            inputWatch = nil
            logger.debug("no /dev/input to watch yet", metadata: ["error": "\(error)"])
        }
    }

    /// Reads every waiting record and interprets it.
    func readChanges() -> [DirectoryChange] {
        var changes: [DirectoryChange] = []
        var buffer = [UInt8](repeating: 0, count: Self.readBufferSize)
        while true {
            // `withUnsafeMutableBytes` rethrows untyped errors, so the typed one travels in a Result.
            let result = buffer.withUnsafeMutableBytes { raw -> Result<[InotifyRecord], SystemCallError> in
                do throws(SystemCallError) {
                    let count = try Sys.read(fileDescriptor, into: raw)
                    return .success(InotifyRecord.parse(UnsafeRawBufferPointer(rebasing: raw[0..<count])))
                } catch {
                    return .failure(error)
                }
            }
            let records: [InotifyRecord]
            switch result {
            case .success(let parsed):
                records = parsed
            case .failure(let error):
                if error.errno != .wouldBlock {
                    logger.info("reading inotify failed", metadata: ["error": "\(error)"])
                }
                return changes
            }
            for record in records { changes += interpret(record) }
        }
    }

    private func interpret(_ record: InotifyRecord) -> [DirectoryChange] {
        if record.mask & UInt32(IN_Q_OVERFLOW) != 0 { return [.rescan] }
        if record.watch == deviceWatch {
            guard record.name == "input" else { return [] }
            watchInputDirectory()
            return [.rescan]
        }
        guard record.watch == inputWatch else { return [] }
        if record.mask & UInt32(IN_IGNORED) != 0 {
            // The directory went away (devtmpfs removes it with its last node); /dev's watch brings it back.
            inputWatch = nil
            return [.rescan]
        }
        return Self.nodeChange(mask: record.mask, name: record.name).map { [$0] } ?? []
    }

    /// The meaning of one record in /dev/input: only `eventN` nodes count (`jsN`, `mouseN` are other
    /// interfaces to the same devices).
    static func nodeChange(mask: UInt32, name: String) -> DirectoryChange? {
        guard name.hasPrefix(eventNodePrefix) else { return nil }
        if mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 { return .node(.added, sysName: name) }
        if mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 { return .node(.removed, sysName: name) }
        if mask & UInt32(IN_ATTRIB) != 0 { return .node(.changed, sysName: name) }
        return nil
    }
}

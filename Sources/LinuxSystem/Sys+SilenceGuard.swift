// The silence guard's two calls: the fork of a child that writes a silence report to a device when a stream stops
// while it plays (CLinuxSystem's SilenceGuard.c, where the child's side is), and the send that feeds it without
// ever blocking or raising SIGPIPE. LinuxInput's HidrawSilenceGuard is their one user.
internal import CLinuxSystem

extension Sys {
    /// The longest silence report a silence guard keeps.
    package static let silenceGuardMaximumReport = Int(CLS_SILENCE_GUARD_MAX_REPORT)

    /// The corresponding C function is `cls_silence_guard_start` (`socketpair`, then `fork`): a child that writes
    /// the latest silence report to `device` when no message comes for `timeoutMilliseconds` while armed, or when
    /// the channel ends while armed. Returns its process id and the channel's end to send messages on (each one
    /// byte armed or not, then `reportLength` bytes; see `sendNonBlocking`), close-on-exec. The caller reaps it.
    package static func startSilenceGuard(
        device: Int32, reportLength: Int, timeoutMilliseconds: Int
    ) throws(SystemCallError) -> (pid: Int32, channel: Int32) {
        var channel: Int32 = -1
        let pid = try valueOrErrno("fork") {
            cls_silence_guard_start(
                device, Int32(clamping: reportLength), Int32(clamping: timeoutMilliseconds), &channel)
        }
        return (pid, channel)
    }

    /// The corresponding C function is `send` with `MSG_DONTWAIT | MSG_NOSIGNAL`: fails with `.wouldBlock` rather
    /// than waiting when the socket is full, and with `.brokenPipe` rather than raising SIGPIPE when its peer is gone.
    package static func sendNonBlocking(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws(SystemCallError) -> Int {
        try valueOrErrno("send") { cls_send_nonblocking(fd, buffer.baseAddress, buffer.count) }
    }
}

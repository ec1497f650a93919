// The one error type of every output, mapped once from the device layer's errors.

/// Why an output operation failed, sorted by what the engine does about it.
package struct OutputFailure: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Kind: String, Sendable, Equatable {
        /// The device was unplugged (`ENODEV`), or is not there.
        case deviceGone
        /// Every effect slot is taken (`ENOSPC`) and nothing could be evicted.
        case noSlot
        case permissionDenied
        /// The device cannot rumble (no `FF_RUMBLE`), or rejected the effect.
        case unsupported
        /// No device matches the selection.
        case notFound
        /// The output was closed under the call (the engine stopped meanwhile).
        case closed
        case other
    }

    package let kind: Kind
    package let message: String

    package init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    package var description: String { message }
}

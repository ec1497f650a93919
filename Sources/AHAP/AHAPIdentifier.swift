// The identifiers of AHAP parameters: the names Core Haptics knows, as cases, and any other as `.unknown(name)`,
// kept verbatim. A value can be built in code as `.unknown` of a known name; it is that identifier all the same:
// it is written as that name, and reads back as the known case.

/// An AHAP identifier enum: `canonical` is the known case an `.unknown` of a known name stands for, and
/// `knownIndex` a known case's position in `known` (nil for an unknown name).
package protocol AHAPIdentifier: RawRepresentable where RawValue == String {
    var canonical: Self { get }
    var knownIndex: Int? { get }
}

/// Equality and hashing of `AHAPIdentifier`s, by the identifier each stands for.
package enum AHAPIdentifiers {
    package static func equal<ID: AHAPIdentifier>(_ lhs: ID, _ rhs: ID) -> Bool {
        let (left, right) = (lhs.canonical, rhs.canonical)
        switch (left.knownIndex, right.knownIndex) {
        case (let first?, let second?): return first == second
        case (nil, nil): return left.rawValue == right.rawValue
        default: return false
        }
    }

    package static func hash<ID: AHAPIdentifier>(_ id: ID, into hasher: inout Hasher) {
        let identity = id.canonical
        if let index = identity.knownIndex {
            hasher.combine(index)
        } else {
            hasher.combine(identity.rawValue)
        }
    }
}

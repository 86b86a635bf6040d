import Foundation
import MarginCore

/// Whether every address `host` resolves to is this machine's loopback (127.0.0.0/8, ::1, or
/// an IPv4-mapped loopback): a name is judged by where it leads, not by how it is spelled.
/// Throws when the name doesn't resolve.
public func resolvesToLoopbackOnly(_ host: String) throws -> Bool {
    var hints = addrinfo()
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    var result: UnsafeMutablePointer<addrinfo>?
    let status = getaddrinfo(host, nil, &hints, &result)
    guard status == 0, let first = result else {
        throw MarginError.invalidArgument("cannot resolve --host \(host): \(String(cString: gai_strerror(status)))")
    }
    defer { freeaddrinfo(result) }
    var addresses = [[UInt8]]()
    var cursor: UnsafeMutablePointer<addrinfo>? = first
    while let entry = cursor {
        if let address = entry.pointee.ai_addr {
            switch Int32(address.pointee.sa_family) {
            case AF_INET:
                address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    addresses.append(withUnsafeBytes(of: $0.pointee.sin_addr) { Array($0) })
                }
            case AF_INET6:
                address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    addresses.append(withUnsafeBytes(of: $0.pointee.sin6_addr) { Array($0) })
                }
            default: break
            }
        }
        cursor = entry.pointee.ai_next
    }
    return isLoopbackOnly(addresses)
}

/// Whether each address (4 or 16 bytes, network order) is a loopback one; false for none.
public func isLoopbackOnly(_ addresses: [[UInt8]]) -> Bool {
    guard !addresses.isEmpty else { return false }
    return addresses.allSatisfy { bytes in
        if bytes.count == 4 { return bytes[0] == 127 }
        guard bytes.count == 16 else { return false }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }  // ::1
        let mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xff && bytes[11] == 0xff
        return mapped && bytes[12] == 127
    }
}

import CDBus

#if canImport(Glibc)
import Glibc
#endif

extension DBusMessage: DBusCallBody {
    /// The header of a method call, or `nil` for another kind of message or one without a path
    /// or member. libdbus validated every field when it read the message.
    public var callHeader: DBusCallHeader? {
        guard kind == .methodCall, let path, let member else { return nil }
        return DBusCallHeader(
            sender: BusName(unchecked: sender ?? ""), path: ObjectPath(unchecked: path),
            interface: interface.map(InterfaceName.init(unchecked:)), member: MemberName(unchecked: member),
            signature: signature, expectsNoReply: expectsNoReply)
    }

    /// The body's length in bytes as marshalled, added up from its top-level values without
    /// decoding any: fixed sizes for basic types, the length of each string, and for an array
    /// the byte length libdbus read from the wire (`dbus_message_iter_get_array_len`), its
    /// elements never visited; structures and variants are walked into, with the wire's
    /// alignment padding. libdbus has no call that gives the body's length.
    public var bodySize: Int {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(pointer, &iter) != 0 else { return 0 }
        var offset = 0
        repeat {
            offset = Self.end(of: &iter, at: offset)
        } while dbus_message_iter_next(&iter) != 0
        return offset
    }

    /// The number of elements of the argument at `index` when it is an array; `nil` otherwise.
    /// Wraps `dbus_message_iter_get_element_count`: nothing is decoded, though an array of a
    /// variable-size type (strings) is walked to be counted.
    public func elementCount(ofArgument index: Int) -> Int? {
        var iter = DBusMessageIter()
        guard index >= 0, dbus_message_iter_init(pointer, &iter) != 0 else { return nil }
        for _ in 0..<index {
            guard dbus_message_iter_next(&iter) != 0 else { return nil }
        }
        guard dbus_message_iter_get_arg_type(&iter) == NOTIFYBUS_DBUS_TYPE_ARRAY else { return nil }
        return Int(dbus_message_iter_get_element_count(&iter))
    }

    /// Where the value at `iter`, starting at byte `start` of the body, ends.
    private static func end(of iter: inout DBusMessageIter, at start: Int) -> Int {
        let type = dbus_message_iter_get_arg_type(&iter)
        switch type {
        case NOTIFYBUS_DBUS_TYPE_STRING, NOTIFYBUS_DBUS_TYPE_OBJECT_PATH:
            return aligned(start, 4) + 4 + textLength(&iter) + 1
        case NOTIFYBUS_DBUS_TYPE_SIGNATURE:
            return start + 1 + textLength(&iter) + 1
        case NOTIFYBUS_DBUS_TYPE_ARRAY:
            let elements = aligned(aligned(start, 4) + 4, alignment(of: dbus_message_iter_get_element_type(&iter)))
            // libdbus gives the length from inside the array; recursing reads no element.
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            return elements + Int(notifybus_dbus_message_iter_get_array_len(&sub))
        case NOTIFYBUS_DBUS_TYPE_STRUCT, NOTIFYBUS_DBUS_TYPE_DICT_ENTRY:
            var offset = aligned(start, 8)
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            while dbus_message_iter_get_arg_type(&sub) != NOTIFYBUS_DBUS_TYPE_INVALID {
                offset = end(of: &sub, at: offset)
                dbus_message_iter_next(&sub)
            }
            return offset
        case NOTIFYBUS_DBUS_TYPE_VARIANT:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            let signature = DBusArgumentDecoder.currentSignature(&sub)
            return end(of: &sub, at: start + 1 + signature.utf8.count + 1)
        case NOTIFYBUS_DBUS_TYPE_INVALID:
            return start
        default:
            let size = fixedSize(of: type)
            return aligned(start, size) + size
        }
    }

    /// The size of a fixed-size basic type on the wire (its alignment too).
    private static func fixedSize(of type: Int32) -> Int {
        switch type {
        case NOTIFYBUS_DBUS_TYPE_BYTE: 1
        case NOTIFYBUS_DBUS_TYPE_INT16, NOTIFYBUS_DBUS_TYPE_UINT16: 2
        case NOTIFYBUS_DBUS_TYPE_INT64, NOTIFYBUS_DBUS_TYPE_UINT64, NOTIFYBUS_DBUS_TYPE_DOUBLE: 8
        default: 4  // BOOLEAN, INT32, UINT32, UNIX_FD
        }
    }

    /// The alignment of a value of `type` on the wire.
    private static func alignment(of type: Int32) -> Int {
        switch type {
        case NOTIFYBUS_DBUS_TYPE_SIGNATURE, NOTIFYBUS_DBUS_TYPE_VARIANT: 1
        case NOTIFYBUS_DBUS_TYPE_STRING, NOTIFYBUS_DBUS_TYPE_OBJECT_PATH, NOTIFYBUS_DBUS_TYPE_ARRAY: 4
        case NOTIFYBUS_DBUS_TYPE_STRUCT, NOTIFYBUS_DBUS_TYPE_DICT_ENTRY: 8
        default: fixedSize(of: type)
        }
    }

    private static func aligned(_ offset: Int, _ alignment: Int) -> Int {
        (offset + alignment - 1) / alignment * alignment
    }

    /// The byte length of the text at `iter`, without copying it.
    private static func textLength(_ iter: inout DBusMessageIter) -> Int {
        var text: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(&iter, &text)
        return text.map { strlen($0) } ?? 0
    }
}

package okgin.bot;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.Value;

/**
 * Protocol messages as plain Java values (protocol.md sections 2, 3): a message is a
 * {@code Map<String, Object>} whose values are String, Long, Boolean, null, List and Map.
 * One message is one msgpack map in one ZeroMQ frame. Decoding keeps every field, so the
 * bot reads what it knows and ignores the rest (protocol.md 14).
 */
public final class Wire {
    private Wire() {}

    /** Thrown for a frame that is not one msgpack map with string keys. */
    public static final class BadFrame extends Exception {
        private static final long serialVersionUID = 1L;

        BadFrame(String why) {
            super(why);
        }
    }

    public static byte[] encode(Map<String, ?> message) {
        MessageBufferPacker packer = MessagePack.newDefaultBufferPacker();
        try {
            pack(packer, message);
            return packer.toByteArray();
        } catch (IOException e) {
            throw new IllegalStateException("packing into memory cannot fail", e);
        }
    }

    private static void pack(MessageBufferPacker p, Object v) throws IOException {
        if (v == null) {
            p.packNil();
        } else if (v instanceof String s) {
            p.packString(s);
        } else if (v instanceof Integer i) {
            p.packInt(i);
        } else if (v instanceof Long l) {
            p.packLong(l);
        } else if (v instanceof Boolean b) {
            p.packBoolean(b);
        } else if (v instanceof Map<?, ?> m) {
            p.packMapHeader(m.size());
            for (Map.Entry<?, ?> e : m.entrySet()) {
                p.packString((String) e.getKey());
                pack(p, e.getValue());
            }
        } else if (v instanceof List<?> list) {
            p.packArrayHeader(list.size());
            for (Object x : list) {
                pack(p, x);
            }
        } else {
            throw new IllegalArgumentException("no msgpack form for " + v.getClass());
        }
    }

    @SuppressWarnings("unchecked")
    public static Map<String, Object> decode(byte[] frame) throws BadFrame {
        try (MessageUnpacker u = MessagePack.newDefaultUnpacker(frame)) {
            Object v = toJava(u.unpackValue());
            if (!(v instanceof Map) || u.hasNext()) {
                throw new BadFrame("a message is exactly one msgpack map");
            }
            return (Map<String, Object>) v;
        } catch (IOException | RuntimeException e) {
            throw new BadFrame("not msgpack: " + e.getMessage());
        }
    }

    private static Object toJava(Value v) throws BadFrame {
        switch (v.getValueType()) {
            case NIL:
                return null;
            case BOOLEAN:
                return v.asBooleanValue().getBoolean();
            case INTEGER:
                return v.asIntegerValue().toLong();
            case STRING:
                return v.asStringValue().asString();
            case ARRAY: {
                List<Object> out = new ArrayList<>();
                for (Value x : v.asArrayValue()) {
                    out.add(toJava(x));
                }
                return out;
            }
            case MAP: {
                Map<String, Object> out = new LinkedHashMap<>();
                for (Map.Entry<Value, Value> e : v.asMapValue().entrySet()) {
                    if (!e.getKey().isStringValue()) {
                        throw new BadFrame("map keys must be strings");
                    }
                    out.put(e.getKey().asStringValue().asString(), toJava(e.getValue()));
                }
                return out;
            }
            default:
                return v.toString(); // float, bin, ext: not used by the protocol
        }
    }

    /** Convenience: a message map from alternating keys and values. */
    public static Map<String, Object> message(Object... keysAndValues) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i + 1 < keysAndValues.length; i += 2) {
            m.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return m;
    }

    public static String str(Map<String, Object> m, String key) {
        return m != null && m.get(key) instanceof String s ? s : null;
    }

    public static long integer(Map<String, Object> m, String key, long fallback) {
        return m != null && m.get(key) instanceof Long l ? l : fallback;
    }

    public static boolean bool(Map<String, Object> m, String key) {
        return m != null && Boolean.TRUE.equals(m.get(key));
    }

    @SuppressWarnings("unchecked")
    public static Map<String, Object> map(Map<String, Object> m, String key) {
        return m != null && m.get(key) instanceof Map<?, ?> x ? (Map<String, Object>) x : null;
    }

    @SuppressWarnings("unchecked")
    public static List<Object> list(Map<String, Object> m, String key) {
        return m != null && m.get(key) instanceof List<?> x ? (List<Object>) x : null;
    }
}

//! Link-layer headers: finds where the IP packet starts inside a captured frame.
//!
//! This is the one place that strips link headers. `etherparse` parses IP and UDP, but it rejects
//! Linux cooked captures of the loopback device (ARPHRD 772) and has no SLL2 or BSD loopback
//! (NULL / LOOP) at all, so every link layer is handled here the same way: given the frame bytes
//! and the interface's LINKTYPE, return the byte offset of the IP header or the reason to skip the
//! frame. Nothing here panics on any input: every read is a checked `get`.

use super::{LinkType, SkipReason};

/// EtherType of IPv4.
pub(crate) const ETHERTYPE_IPV4: u16 = 0x0800;
/// EtherType of IPv6.
pub(crate) const ETHERTYPE_IPV6: u16 = 0x86DD;
/// EtherType of an 802.1Q VLAN tag.
const ETHERTYPE_VLAN: u16 = 0x8100;
/// EtherType of an 802.1ad (QinQ) service tag.
const ETHERTYPE_QINQ: u16 = 0x88A8;
/// Pre-standard QinQ service tag still written by some switches.
const ETHERTYPE_QINQ_OLD: u16 = 0x9100;
/// At most this many stacked VLAN tags are stripped (real networks use one or two).
const MAX_VLAN_TAGS: usize = 8;

/// BSD address family of IPv4 in NULL / LOOP headers.
const AF_INET: u32 = 2;
/// BSD address families of IPv6: NetBSD / OpenBSD, FreeBSD, Darwin.
const AF_INET6: [u32; 3] = [24, 28, 30];

/// Length of an Ethernet II header:
///
/// ```text
///  0      6      12     14
///  | dst  | src  | type |
/// ```
const ETHERNET_HEADER_LEN: usize = 14;

/// Length of a Linux cooked (SLL, LINKTYPE 113) header:
///
/// ```text
///  0           2        4            6          14         16
///  | pkttype   | ARPHRD | addr len   | address  | protocol |
/// ```
const SLL_HEADER_LEN: usize = 16;
/// Offset of the protocol (EtherType) field in an SLL header.
const SLL_PROTOCOL: usize = 14;

/// Length of a Linux cooked v2 (SLL2, LINKTYPE 276) header:
///
/// ```text
///  0          2          4          8        10        11         12         20
///  | protocol | reserved | ifindex  | ARPHRD | pkttype | addr len | address  |
/// ```
const SLL2_HEADER_LEN: usize = 20;
/// Offset of the protocol (EtherType) field in an SLL2 header.
const SLL2_PROTOCOL: usize = 0;

/// Length of the BSD loopback (NULL / LOOP) header: a 4-byte address family.
const LOOPBACK_HEADER_LEN: usize = 4;

/// Reads a big-endian `u16` at `at`, if the frame has it.
fn be16(frame: &[u8], at: usize) -> Option<u16> {
    let bytes = frame.get(at..at.checked_add(2)?)?;
    Some(u16::from_be_bytes([*bytes.first()?, *bytes.get(1)?]))
}

/// Reads four bytes at `at`, if the frame has them.
fn four(frame: &[u8], at: usize) -> Option<[u8; 4]> {
    let bytes = frame.get(at..at.checked_add(4)?)?;
    bytes.try_into().ok()
}

/// Returns the offset of the IP header in `frame`, captured on a link of type `link`.
///
/// # Errors
/// The reason to skip the frame: an unsupported link type, a non-IP protocol, or a frame cut
/// inside its link header.
pub(crate) fn ip_offset(link: LinkType, frame: &[u8]) -> Result<usize, SkipReason> {
    match link {
        LinkType::ETHERNET => ethernet(frame),
        LinkType::LINUX_SLL => ethertype_at(frame, SLL_PROTOCOL, SLL_HEADER_LEN),
        LinkType::LINUX_SLL2 => ethertype_at(frame, SLL2_PROTOCOL, SLL2_HEADER_LEN),
        LinkType::NULL => {
            let raw = four(frame, 0).ok_or(SkipReason::TruncatedHeader)?;
            // Host byte order of the machine that captured: a family is a small number, so if
            // the little-endian reading does not fit in 16 bits, the writer was big-endian.
            let le = u32::from_le_bytes(raw);
            let family = if le > 0xFFFF {
                u32::from_be_bytes(raw)
            } else {
                le
            };
            loopback_family(family)
        }
        LinkType::LOOP => {
            let raw = four(frame, 0).ok_or(SkipReason::TruncatedHeader)?;
            loopback_family(u32::from_be_bytes(raw))
        }
        LinkType::RAW | LinkType::IPV4 | LinkType::IPV6 => Ok(0),
        _ => Err(SkipReason::UnsupportedLinkType),
    }
}

/// Ethernet II with any number (up to [`MAX_VLAN_TAGS`]) of 802.1Q / 802.1ad tags.
fn ethernet(frame: &[u8]) -> Result<usize, SkipReason> {
    let mut type_at = ETHERNET_HEADER_LEN - 2;
    for _ in 0..=MAX_VLAN_TAGS {
        let ethertype = be16(frame, type_at).ok_or(SkipReason::TruncatedHeader)?;
        match ethertype {
            // A tag is 2 bytes of TCI, then the next EtherType.
            ETHERTYPE_VLAN | ETHERTYPE_QINQ | ETHERTYPE_QINQ_OLD => type_at += 4,
            _ => return ip_after(frame, ethertype, type_at + 2),
        }
    }
    Err(SkipReason::NotIp)
}

/// The EtherType at `type_at`, for a header of `header_len` bytes.
fn ethertype_at(frame: &[u8], type_at: usize, header_len: usize) -> Result<usize, SkipReason> {
    let ethertype = be16(frame, type_at).ok_or(SkipReason::TruncatedHeader)?;
    if frame.len() < header_len {
        return Err(SkipReason::TruncatedHeader);
    }
    ip_after(frame, ethertype, header_len)
}

/// `start` if `ethertype` is IPv4 or IPv6 and the frame reaches `start`.
fn ip_after(frame: &[u8], ethertype: u16, start: usize) -> Result<usize, SkipReason> {
    match ethertype {
        ETHERTYPE_IPV4 | ETHERTYPE_IPV6 if frame.len() >= start => Ok(start),
        ETHERTYPE_IPV4 | ETHERTYPE_IPV6 => Err(SkipReason::TruncatedHeader),
        _ => Err(SkipReason::NotIp),
    }
}

/// The IP header follows the 4-byte family if the family is an IP one.
fn loopback_family(family: u32) -> Result<usize, SkipReason> {
    if family == AF_INET || AF_INET6.contains(&family) {
        Ok(LOOPBACK_HEADER_LEN)
    } else {
        Err(SkipReason::NotIp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IP: [u8; 2] = [0x45, 0x00];

    fn with_ip(header: &[u8]) -> Vec<u8> {
        let mut v = header.to_vec();
        v.extend_from_slice(&IP);
        v
    }

    #[test]
    fn ethernet_plain_vlan_and_qinq() {
        let plain = with_ip(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0x08, 0x00]);
        assert_eq!(ip_offset(LinkType::ETHERNET, &plain), Ok(14));

        let vlan = with_ip(
            &[0; 12]
                .iter()
                .chain(&[0x81, 0x00, 0x00, 0x2A, 0x86, 0xDD])
                .copied()
                .collect::<Vec<_>>(),
        );
        assert_eq!(ip_offset(LinkType::ETHERNET, &vlan), Ok(18));

        let qinq: Vec<u8> = [0u8; 12]
            .iter()
            .chain(&[0x88, 0xA8, 0x00, 0x64, 0x81, 0x00, 0x00, 0x2A, 0x08, 0x00])
            .copied()
            .collect();
        assert_eq!(ip_offset(LinkType::ETHERNET, &with_ip(&qinq)), Ok(22));
    }

    #[test]
    fn ethernet_non_ip_and_truncated() {
        let arp = [0u8; 12]
            .iter()
            .chain(&[0x08, 0x06, 0, 1])
            .copied()
            .collect::<Vec<_>>();
        assert_eq!(ip_offset(LinkType::ETHERNET, &arp), Err(SkipReason::NotIp));
        // 802.3 length field instead of an EtherType.
        let llc = [0u8; 12]
            .iter()
            .chain(&[0x00, 0x26, 0x42, 0x42])
            .copied()
            .collect::<Vec<_>>();
        assert_eq!(ip_offset(LinkType::ETHERNET, &llc), Err(SkipReason::NotIp));
        assert_eq!(
            ip_offset(LinkType::ETHERNET, &[0u8; 13]),
            Err(SkipReason::TruncatedHeader)
        );
        assert_eq!(
            ip_offset(LinkType::ETHERNET, &[]),
            Err(SkipReason::TruncatedHeader)
        );
        // A VLAN tag cut after its TCI.
        let cut = [0u8; 12]
            .iter()
            .chain(&[0x81, 0x00, 0x00, 0x2A])
            .copied()
            .collect::<Vec<_>>();
        assert_eq!(
            ip_offset(LinkType::ETHERNET, &cut),
            Err(SkipReason::TruncatedHeader)
        );
        // Endless VLAN tags stop at the limit.
        let mut endless = vec![0u8; 12];
        for _ in 0..20 {
            endless.extend_from_slice(&[0x81, 0x00, 0x00, 0x01]);
        }
        assert_eq!(
            ip_offset(LinkType::ETHERNET, &endless),
            Err(SkipReason::NotIp)
        );
    }

    #[test]
    fn linux_sll_loopback() {
        // What `tcpdump -i any` wrote before libpcap 1.10 for 127.0.0.1: ARPHRD 772 (loopback).
        let sll = [
            0x00, 0x00, // packet type: to us
            0x03, 0x04, // ARPHRD_LOOPBACK = 772
            0x00, 0x06, // address length
            0, 0, 0, 0, 0, 0, 0, 0, // address
            0x08, 0x00, // IPv4
        ];
        assert_eq!(ip_offset(LinkType::LINUX_SLL, &with_ip(&sll)), Ok(16));
        assert_eq!(
            ip_offset(LinkType::LINUX_SLL, &sll[..15]),
            Err(SkipReason::TruncatedHeader)
        );
        let mut arp = sll;
        arp[15] = 0x06;
        assert_eq!(ip_offset(LinkType::LINUX_SLL, &arp), Err(SkipReason::NotIp));
    }

    #[test]
    fn linux_sll2_loopback() {
        // What `tcpdump -i any` writes since libpcap 1.10 for 127.0.0.1.
        let sll2 = [
            0x86, 0xDD, // IPv6
            0x00, 0x00, // reserved
            0x00, 0x00, 0x00, 0x01, // interface index 1 (lo)
            0x03, 0x04, // ARPHRD_LOOPBACK = 772
            0x00, // packet type: to us
            0x06, // address length
            0, 0, 0, 0, 0, 0, 0, 0, // address
        ];
        assert_eq!(ip_offset(LinkType::LINUX_SLL2, &with_ip(&sll2)), Ok(20));
        assert_eq!(
            ip_offset(LinkType::LINUX_SLL2, &sll2[..19]),
            Err(SkipReason::TruncatedHeader)
        );
        assert_eq!(
            ip_offset(LinkType::LINUX_SLL2, &sll2[..1]),
            Err(SkipReason::TruncatedHeader)
        );
    }

    #[test]
    fn bsd_null_both_byte_orders_and_loop() {
        assert_eq!(ip_offset(LinkType::NULL, &with_ip(&[2, 0, 0, 0])), Ok(4));
        assert_eq!(ip_offset(LinkType::NULL, &with_ip(&[0, 0, 0, 2])), Ok(4));
        assert_eq!(ip_offset(LinkType::NULL, &with_ip(&[30, 0, 0, 0])), Ok(4));
        assert_eq!(ip_offset(LinkType::NULL, &with_ip(&[0, 0, 0, 28])), Ok(4));
        assert_eq!(ip_offset(LinkType::NULL, &with_ip(&[24, 0, 0, 0])), Ok(4));
        assert_eq!(
            ip_offset(LinkType::NULL, &with_ip(&[7, 0, 0, 0])),
            Err(SkipReason::NotIp)
        );
        assert_eq!(
            ip_offset(LinkType::NULL, &[2, 0, 0]),
            Err(SkipReason::TruncatedHeader)
        );
        // LOOP is always network byte order.
        assert_eq!(ip_offset(LinkType::LOOP, &with_ip(&[0, 0, 0, 2])), Ok(4));
        assert_eq!(ip_offset(LinkType::LOOP, &with_ip(&[0, 0, 0, 30])), Ok(4));
        assert_eq!(
            ip_offset(LinkType::LOOP, &with_ip(&[2, 0, 0, 0])),
            Err(SkipReason::NotIp)
        );
    }

    #[test]
    fn raw_ip_and_unsupported() {
        for link in [LinkType::RAW, LinkType::IPV4, LinkType::IPV6] {
            assert_eq!(ip_offset(link, &IP), Ok(0));
        }
        assert_eq!(
            ip_offset(LinkType(105), &IP),
            Err(SkipReason::UnsupportedLinkType)
        );
    }
}

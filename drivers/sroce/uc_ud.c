// SPDX-License-Identifier: GPL-2.0
/*
 * Receive on the unacknowledged transports: UC (SEND and WRITE as on RC,
 * with the RC responder's executors, but nothing goes back and a lost
 * packet loses its message) and UD (one-packet SENDs checked against the
 * Q_Key, each with the 40-byte GRH area in front of its payload).
 */
#include <linux/if_vlan.h>

#include "sroce.h"
#include <sroce/wire.h>

/**
 * sroce_resp_uc_accept() - whether a UC packet is executed
 * @in_msg: SROCE_MSG_* in progress
 * @epsn: the PSN that continues it
 * @psn: the packet's PSN
 * @opcode: the packet's opcode
 * @abandon: set when the message in progress is given up
 *
 * UC has no acknowledgements and no retransmission: a packet lost inside
 * a message loses the whole message, silently, and the responder waits
 * for the first packet of a later message, whatever its PSN.
 *
 * Return: true to execute the packet, false to drop it.
 */
bool sroce_resp_uc_accept(u8 in_msg, u32 epsn, u32 psn, u8 opcode,
			  bool *abandon)
{
	u8 next;

	*abandon = false;
	if (in_msg != SROCE_MSG_NONE && psn == epsn &&
	    !sroce_resp_opseq(in_msg, opcode, &next))
		return true;
	*abandon = in_msg != SROCE_MSG_NONE;
	return !sroce_resp_opseq(SROCE_MSG_NONE, opcode, &next);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_resp_uc_accept);

/**
 * sroce_resp_uc() - the responder's entry for a UC packet
 * @qp: the UC QP it names
 * @pkt: the packet
 *
 * SEND and WRITE as on RC, but nothing goes back: a message with no
 * receive WQE, a bad rkey or a lost packet is dropped, and only an error
 * that completes a receive WQE (too long, bad lkey) takes the QP to ERR.
 */
void sroce_resp_uc(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	u8 op = pkt->opcode & SROCE_OP_MASK, nak, next;
	bool abandon, fail = false;
	u32 resets;
	int err;

	spin_lock_bh(&qp->resp.lock);
	if (qp->state < IB_QPS_RTR || qp->state == IB_QPS_ERR ||
	    !sroce_pkt_from_peer(qp, pkt))
		goto out;
	if (!sroce_resp_uc_accept(qp->resp.in_msg, qp->resp.epsn, pkt->psn,
				  pkt->opcode, &abandon)) {
		if (abandon && sroce_pkt_icrc_ok(pkt)) {
			qp->resp.in_msg = SROCE_MSG_NONE;
			qp->resp.rcv_off = 0;
			sroce_qp_count(qp, SROCE_CNT_RX_OUT_OF_SEQ, 1);
		}
		goto out;
	}
	if (abandon) {
		sroce_qp_count(qp, SROCE_CNT_RX_OUT_OF_SEQ, 1);
		qp->resp.in_msg = SROCE_MSG_NONE;
		qp->resp.rcv_off = 0;
	}
	sroce_resp_opseq(qp->resp.in_msg, pkt->opcode, &next);
	qp->resp.rwqe_failed = false;
	if (op <= SROCE_OP_SEND_ONLY_IMM)
		err = sroce_resp_send(qp, pkt, &nak);
	else
		err = sroce_resp_write(qp, pkt, &nak);
	if (err == -EBADMSG)
		goto out;	/* corrupt: as if lost */
	qp->resp.epsn = sroce_psn_add(pkt->psn, 1);
	if (!err) {
		qp->resp.in_msg = next;
	} else {
		/* The message is lost; a receive WQE completed in error
		 * (length, protection) also ends the QP.
		 */
		qp->resp.in_msg = SROCE_MSG_NONE;
		qp->resp.rcv_off = 0;
		fail = qp->resp.rwqe_failed;
	}
out:
	resets = qp->resets;
	spin_unlock_bh(&qp->resp.lock);
	if (fail)
		sroce_qp_error(qp, resets);
}

/**
 * sroce_resp_ud() - a UD datagram (or a MAD for QP1)
 * @qp: the UD or GSI QP it names
 * @pkt: the packet, ICRC checked
 *
 * The receive WQE gets the 40-byte GRH area first, as ib_core and the rxe
 * provider expect on RoCEv2: the IPv6 header, or an IPv4 header in its last
 * 20 bytes. A datagram with no receive WQE, a wrong Q_Key or too little
 * room is dropped, as UD allows.
 */
void sroce_resp_ud(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	struct sroce_copy c = { .skb = pkt->skb, .off = pkt->payoff,
				.to_mr = true, .qp = qp };
	bool v6 = pkt->skb->protocol == htons(ETH_P_IPV6);
	struct sroce_wc wc = {
		.status = IB_WC_SUCCESS,
		.opcode = IB_WC_RECV,
		.flags = IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE,
		.network_hdr_type = v6 ? RDMA_NETWORK_IPV6 : RDMA_NETWORK_IPV4,
	};
	struct sroce_copy g = { .to_mr = true, .qp = qp };
	u8 grh[40] = {};
	u8 op = pkt->opcode & SROCE_OP_MASK;
	bool fail = false;
	u32 resets;
	u32 crc;
	int err;

	if (v6)
		memcpy(grh, skb_network_header(pkt->skb), 40);
	else
		memcpy(grh + 20, skb_network_header(pkt->skb), 20);
	g.buf = grh;
	/*
	 * ib_core finds the GID a datagram came to by its address and VLAN
	 * (ib_init_ah_attr_from_wc()): without the VLAN, a MAD to a VLAN
	 * netdev's GID matches no GID and ib_cm drops it, so rdma_cm could
	 * not accept a connection there. The netdev is the one it arrived on
	 * (or, from this host, the one that owns its destination address).
	 */
	if (is_vlan_dev(pkt->skb->dev)) {
		wc.flags |= IB_WC_WITH_VLAN;
		wc.vlan_id = vlan_dev_vlan_id(pkt->skb->dev);
	}

	spin_lock_bh(&qp->resp.lock);
	if (qp->state < IB_QPS_RTR || qp->state == IB_QPS_ERR ||
	    pkt->paylen > qp->pmtu)
		goto drop;
	if (sroce_deth_qkey(&pkt->deth) != qp->qkey)
		goto drop;
	if (!qp->resp.have_rwqe && sroce_resp_get_rwqe(qp, pkt))
		goto drop;
	if (qp->resp.rwqe.length < sizeof(grh) + pkt->paylen) {
		if (sroce_pkt_icrc_ok(pkt))
			sroce_resp_fail_rwqe(qp, IB_WC_LOC_LEN_ERR);
		goto drop;
	}
	c.crc = sroce_pkt_icrc_copy(pkt, &crc);
	err = sroce_sge_copy(qp->ibqp.pd, qp->resp.rwqe.sge, qp->resp.rwqe.num_sge, 0,
			     sizeof(grh), IB_ACCESS_LOCAL_WRITE, &g);
	if (!err)
		err = sroce_sge_copy(qp->ibqp.pd, qp->resp.rwqe.sge,
				     qp->resp.rwqe.num_sge, sizeof(grh),
				     pkt->paylen, IB_ACCESS_LOCAL_WRITE, &c);
	/* ODP: dropped, no RNR NAK on UD; the WQE waits for the next one. */
	if (sroce_resp_odp_miss(err))
		goto drop;
	if (err) {
		if (sroce_pkt_icrc_ok(pkt))
			sroce_resp_fail_rwqe(qp, IB_WC_LOC_PROT_ERR);
		goto drop;
	}
	/* A corrupt datagram leaves the receive WQE for the next one. */
	if (!sroce_pkt_icrc_placed(pkt, crc))
		goto drop;
	if (op == SROCE_OP_SEND_ONLY_IMM) {
		wc.flags |= IB_WC_WITH_IMM;
		wc.imm = pkt->imm;
	}
	wc.byte_len = sizeof(grh) + pkt->paylen;
	/* The sender, not a connected peer. */
	wc.src_qp = sroce_deth_sqp(&pkt->deth);
	fail = sroce_resp_complete(qp, &wc, pkt->se);
drop:
	resets = qp->resets;
	spin_unlock_bh(&qp->resp.lock);
	if (fail)
		sroce_qp_error(qp, resets);
}

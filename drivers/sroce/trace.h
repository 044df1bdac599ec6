/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of sroce (events/sroce/ in tracefs): packets sent and
 * received, QP state changes, retransmissions, NAKs and RNR NAKs both
 * ways, and completions with an error status. Each names its device and
 * QP. Off, each costs a patched-out branch (static keys).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sroce

#if !defined(_SROCE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _SROCE_TRACE_H

#include <linux/tracepoint.h>

#include "sroce.h"
#include <sroce/wire.h>

#define sroce_trace_qp_state(s)						\
	__print_symbolic(s, { IB_QPS_RESET, "RESET" },			\
			 { IB_QPS_INIT, "INIT" }, { IB_QPS_RTR, "RTR" },	\
			 { IB_QPS_RTS, "RTS" }, { IB_QPS_SQD, "SQD" },	\
			 { IB_QPS_SQE, "SQE" }, { IB_QPS_ERR, "ERR" })

/* The device's name, as it is now (a rename shows in later events). */
#define sroce_trace_dev(d, ib)						\
	strscpy(d, dev_name(&(ib)->dev), IB_DEVICE_NAME_MAX)

#define sroce_trace_wc_status(s)					\
	__print_symbolic(s, { IB_WC_LOC_LEN_ERR, "local length" },	\
			 { IB_WC_LOC_QP_OP_ERR, "local QP operation" },	\
			 { IB_WC_LOC_PROT_ERR, "local protection" },	\
			 { IB_WC_WR_FLUSH_ERR, "flushed" },		\
			 { IB_WC_MW_BIND_ERR, "MW bind" },		\
			 { IB_WC_BAD_RESP_ERR, "bad response" },	\
			 { IB_WC_LOC_ACCESS_ERR, "local access" },	\
			 { IB_WC_REM_INV_REQ_ERR, "remote invalid request" }, \
			 { IB_WC_REM_ACCESS_ERR, "remote access" },	\
			 { IB_WC_REM_OP_ERR, "remote operation" },	\
			 { IB_WC_RETRY_EXC_ERR, "retry exceeded" },	\
			 { IB_WC_RNR_RETRY_EXC_ERR, "RNR retry exceeded" }, \
			 { IB_WC_REM_ABORT_ERR, "remote abort" },	\
			 { IB_WC_GENERAL_ERR, "general" })

/* A packet's BTH fields; @len: BTH to ICRC, both included. */
DECLARE_EVENT_CLASS(sroce_pkt,
		    TP_PROTO(const struct sroce_dev *sdev,
			     const struct sroce_bth *bth, u32 len),
		    TP_ARGS(sdev, bth, len),
		    TP_STRUCT__entry(__array(char, dev, IB_DEVICE_NAME_MAX)
				     __field(u32, qpn)
				     __field(u32, psn)
				     __field(u32, len)
				     __field(u8, opcode)
				     __field(bool, ackreq)),
		    TP_fast_assign(sroce_trace_dev(__entry->dev, &sdev->ib);
				   __entry->qpn = sroce_bth_qpn(bth);
				   __entry->psn = sroce_bth_psn(bth);
				   __entry->len = len;
				   __entry->opcode = sroce_bth_opcode(bth);
				   __entry->ackreq = sroce_bth_ackreq(bth);),
		    TP_printk("dev %s dqpn 0x%x opcode 0x%02x psn 0x%06x len %u%s",
			      __entry->dev, __entry->qpn, __entry->opcode, __entry->psn,
			      __entry->len, __entry->ackreq ? " ackreq" : "")
);

DEFINE_EVENT(sroce_pkt, sroce_tx,
	     TP_PROTO(const struct sroce_dev *sdev, const struct sroce_bth *bth,
		      u32 len),
	     TP_ARGS(sdev, bth, len));

DEFINE_EVENT(sroce_pkt, sroce_rx,
	     TP_PROTO(const struct sroce_dev *sdev, const struct sroce_bth *bth,
		      u32 len),
	     TP_ARGS(sdev, bth, len));

TRACE_EVENT(sroce_qp_state,
	    TP_PROTO(const struct sroce_qp *qp, enum ib_qp_state from,
		     enum ib_qp_state to),
	    TP_ARGS(qp, from, to),
	    TP_STRUCT__entry(__array(char, dev, IB_DEVICE_NAME_MAX)
			     __field(u32, qpn)
			     __field(int, from)
			     __field(int, to)),
	    TP_fast_assign(sroce_trace_dev(__entry->dev, &qp->sdev->ib);
			   __entry->qpn = qp->ibqp.qp_num;
			   __entry->from = from;
			   __entry->to = to;),
	    TP_printk("dev %s qpn 0x%x %s -> %s", __entry->dev, __entry->qpn,
		      sroce_trace_qp_state(__entry->from),
		      sroce_trace_qp_state(__entry->to))
);

/* A request packet sent again (go-back-N after a NAK or a timeout). */
TRACE_EVENT(sroce_retransmit,
	    TP_PROTO(const struct sroce_qp *qp, u32 psn),
	    TP_ARGS(qp, psn),
	    TP_STRUCT__entry(__array(char, dev, IB_DEVICE_NAME_MAX)
			     __field(u32, qpn)
			     __field(u32, psn)),
	    TP_fast_assign(sroce_trace_dev(__entry->dev, &qp->sdev->ib);
			   __entry->qpn = qp->ibqp.qp_num;
			   __entry->psn = psn;),
	    TP_printk("dev %s qpn 0x%x psn 0x%06x", __entry->dev, __entry->qpn,
		      __entry->psn)
);

/*
 * A NAK or RNR NAK sent by the responder (@tx) or received by the
 * requester; @syn is the AETH syndrome.
 */
TRACE_EVENT(sroce_nak,
	    TP_PROTO(const struct sroce_qp *qp, bool tx, u8 syn, u32 psn),
	    TP_ARGS(qp, tx, syn, psn),
	    TP_STRUCT__entry(__array(char, dev, IB_DEVICE_NAME_MAX)
			     __field(u32, qpn)
			     __field(u32, psn)
			     __field(u8, syn)
			     __field(bool, tx)),
	    TP_fast_assign(sroce_trace_dev(__entry->dev, &qp->sdev->ib);
			   __entry->qpn = qp->ibqp.qp_num;
			   __entry->psn = psn;
			   __entry->syn = syn;
			   __entry->tx = tx;),
	    TP_printk("dev %s qpn 0x%x %s %s syndrome 0x%02x psn 0x%06x",
		      __entry->dev, __entry->qpn, __entry->tx ? "sent" : "received",
		      (__entry->syn & SROCE_AETH_TYPE_MASK) == SROCE_AETH_RNR_NAK ?
		      "RNR NAK" : "NAK", __entry->syn, __entry->psn)
);

/* A completion with an error status (flushes included). */
TRACE_EVENT(sroce_err_cqe,
	    TP_PROTO(const struct sroce_qp *qp, const struct sroce_wc *wc),
	    TP_ARGS(qp, wc),
	    TP_STRUCT__entry(__array(char, dev, IB_DEVICE_NAME_MAX)
			     __field(u64, wr_id)
			     __field(u32, qpn)
			     __field(int, status)
			     __field(int, opcode)),
	    TP_fast_assign(sroce_trace_dev(__entry->dev, &qp->sdev->ib);
			   __entry->wr_id = sroce_trace_wr_id(qp->user,
							      wc->wr_id);
			   __entry->qpn = qp->ibqp.qp_num;
			   __entry->status = wc->status;
			   __entry->opcode = wc->opcode;),
	    TP_printk("dev %s qpn 0x%x wr_id 0x%llx opcode %d status %d (%s)",
		      __entry->dev, __entry->qpn, __entry->wr_id, __entry->opcode,
		      __entry->status, sroce_trace_wc_status(__entry->status))
);

#endif /* _SROCE_TRACE_H */

/* Out of the kernel tree: Kbuild puts this directory on main.o's path. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
